"""One scope's interpretation: its environment, grad mode, branch path and loops, and its statements.

A `Scope` runs the statements of module code, of a function analysed on its own (arguments unknown), or of
a function called from interpreted code (arguments are the caller's values: see calls.py). Scopes of one
run share a `RunState` (the problems waiting for a grad mode, carried state, the interpretation budget).
Expressions and calls are evaluated by `Expressions` (expressions.py) and `Calls` (calls.py); tensors, nn modules
and optimizers are modelled by `Tensors`, `Modules` and `Optimizers` (the files named after them). Each is one
object per analysis, without state of its own, handed the running scope as an argument.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass, field

import libcst as cst

from .classes import walk_statements
from .calls import Calls
from .expressions import Expressions, words
from .model import (
    truth,
    AnalysisCancelled,
    GRAD_OFF,
    GRAD_ON,
    GRAD_UNKNOWN,
    Dim,
    DictVal,
    FunctionRef,
    Instance,
    Literal,
    Module,
    OptionDefault,
    Problem,
    Seq,
    Special,
    Tensor,
)
from .sets import EMPTY, SharedSet
from .modules import Modules
from .optimizers import Optimizers
from .tensors import Tensors, flat_tensors
from .summaries import UNBOUND

# Words in an `if` test that make its arms mode-dependent (training vs eval, grad vs no grad, scripting).
GUARD_WORDS = ("training", "grad", "inference", "is_scripting", "is_tracing", "jit", "inplace", "export", "compil")


# What the domain models (`Tensors`, `Modules`, `Optimizers`) may read of the scope they are handed: where and under
# which mode an event happens, the services that record it, and the run's shared records. They never evaluate code
# (no `env`, `eval`, `calls`): the interpreter hands them values. tests/test_facts_structure.py holds them to it.
EVENT_CONTEXT = frozenset({
    # where: the statement, its top-level block, branch path, loops, same-file calls and container calls
    "stmt", "top", "path", "base_path", "loops", "serial", "kind", "function", "parent", "inlined", "call_site",
    "call_args", "layer_site", "layer_call_site",
    # the instance a method runs on: a model's code, reached through `model(x)` (Tensors.argument_site)
    "self_value",
    # under which modes
    "grad", "inference", "guarded", "option_condition",
    # recording
    "_problem", "new_seq", "call_chain", "ancestors", "materialize_param",
    # shared records: the file's Facts, the run's state, the op table
    "facts", "run", "ops",
})

_SCOPE_SERIALS = itertools.count(1)
_MISSING = object()


class Env(dict):
    """A scope's names and values. While an arm of a branch runs, the first write of each name records the value it
    replaced (`journal`), so the arm's changes are listed, undone and joined name by name: copying the whole
    environment for every `if` made N branches in a scope of N names cost N^2."""

    __slots__ = ("journal",)

    def __init__(self):
        super().__init__()
        self.journal: dict | None = None  # name -> the value before the running arm (or _MISSING)

    def __setitem__(self, name, value):
        journal = self.journal
        if journal is not None and name not in journal:
            journal[name] = dict.get(self, name, _MISSING)
        dict.__setitem__(self, name, value)

    def pop(self, name, *default):
        journal = self.journal
        if journal is not None and name not in journal:
            journal[name] = dict.get(self, name, _MISSING)
        return dict.pop(self, name, *default)

    def __delitem__(self, name):
        self.pop(name)

    def update(self, *args, **kwargs):
        for name, value in dict(*args, **kwargs).items():
            self[name] = value

    def setdefault(self, name, value=None):
        if name not in self:
            self[name] = value
        return dict.__getitem__(self, name)

    def run_arm(self, run) -> dict:
        """Run one arm from the current state; return what it changed (name -> value after it, or _MISSING) and
        put the state back as it was before the arm."""
        outer, self.journal = self.journal, {}
        try:
            run()
        finally:
            changed, self.journal = self.journal, outer
        after = {name: dict.get(self, name, _MISSING) for name in changed}
        for name, old in changed.items():
            if old is _MISSING:
                dict.pop(self, name, None)
            else:
                dict.__setitem__(self, name, old)
        return after


@dataclass(eq=False)
class Carry:
    """A name (or `obj.attr`) re-bound inside a loop whose tensor (and graph) reaches the next iteration."""

    name: str
    stmt: cst.CSTNode
    value_node: cst.BaseExpression
    history: SharedSet
    loop: cst.CSTNode
    tensor: object = None
    used: bool = False  # read in the next iteration before being re-bound
    use_node: cst.CSTNode | None = None  # that first read (a fix can detach it there)
    use_top: cst.CSTNode | None = None
    top: cst.CSTNode | None = None  # the top-level statement holding `stmt`


@dataclass(eq=False)
class LoopFrame:
    node: cst.CSTNode
    iteration: int
    owner: object  # the Scope running the loop
    start_seq: int = 0  # events numbered below it happened before the loop began
    element_saves: SharedSet = EMPTY  # saves reached through the loop's elements (one stand-in for many)


@dataclass
class RunState:
    """What the scopes of one run (module code with its calls, or one function on its own) share."""

    unknown_grad_problems: list = field(default_factory=list)  # leaf writes that hold only if grad is on
    created: list = field(default_factory=list)
    saw_backward: bool = False
    loop_backward: bool = False
    carries: list = field(default_factory=list)
    # (scope id or object id, name) -> (stmt, value_node, loop node, top, display name, object or None)
    assigned_in_loop: dict = field(default_factory=dict)
    pending: dict = field(default_factory=dict)  # (scope id or object id, name) -> Carry awaiting its first read
    # code this run executed may have changed torch's default dtype or device (`torch.set_default_dtype`,
    # `torch.device("cuda")` as a context), or entered autocast: factories and layers then prove no dtype or device
    defaults_changed: bool = False
    autocast_seen: bool = False


class Scope:
    """One scope's interpretation: its environment, grad mode, path and loops, and its statements. Expressions and
    calls are evaluated by the analysis's `Expressions` and `Calls`, tensor, module and optimizer facts by its domain
    models; each is handed this scope (the context of what it records) as an argument."""

    grad_flag = ""  # `train` inside `with torch.set_grad_enabled(train):` (this scope's own with-blocks)

    # They hold no state of their own, so one of each serves every scope of every analysis.
    calls = Calls()
    expressions = Expressions(calls)
    tensors = Tensors()
    modules = Modules(tensors)
    optimizers = Optimizers(modules)

    def __init__(self, analysis, kind: str, grad: str, function: cst.CSTNode | None = None, class_info=None,
                 parent: "Scope | None" = None, enclosing: "Scope | None" = None, self_value=None, top=None):
        self.a = analysis
        analysis.scopes.add(self)
        self.serial = next(_SCOPE_SERIALS)  # never reused (ids of finished scopes are)
        self.facts = analysis.facts
        self.ops = analysis.ops
        self.kind = kind
        self.grad = grad
        self.function = function
        self.class_info = class_info
        self.parent = parent
        self.enclosing = enclosing
        self.self_value = self_value
        self.run = parent.run if parent is not None else RunState()
        self.globals_scope = parent.globals_scope if parent is not None else (self if kind == "module" else None)
        self.depth = parent.depth + 1 if parent is not None else 0
        self.stack: tuple = (parent.stack if parent is not None else ()) + ((function,) if function is not None else ())
        if function is not None:
            analysis.touch(function)  # a cached run depends on every definition it interprets
        self.env: Env = Env()
        self.params: set[str] = set()
        self.local_names: set[str] = set()
        self.global_names: set[str] = set()
        self.path: tuple = parent.path if parent is not None else ()
        self.loops: list[LoopFrame] = list(parent.loops) if parent is not None else []
        self.stmt: cst.CSTNode | None = parent.stmt if parent is not None else None
        self.guarded = parent.guarded if parent is not None else 0  # inside `if self.training:`-like arms
        # inside the arm of `if flag:` that a bool parameter's default turns off: "`flag` is true"
        self.option_condition = parent.option_condition if parent is not None else ""
        self.top: cst.CSTNode | None = top  # the top-level statement being run (locates blocks)
        self.inference = parent.inference if parent is not None else None  # `torch.inference_mode()` call
        self.returns: list = []
        self.yields: list = []  # values a generator function yields (`yield x, y`, the items of `yield from`)
        self.base_path = self.path
        self.returned = False  # a `return` ran on the function's unconditional path
        self.global_cache: dict[str, object] = {}
        self.inlined = parent is not None and function is not None
        self.layer_site = None  # the constructor of a container child being called (locates its saves and writes)
        self.layer_call_site = None  # (call node, top) of the container call running that child
        self.call_site = None  # (call node, its top) that runs this function, when called from this file's code
        self.call_args: list = []  # the tensors that call passed in

    def child_scope(self, grad: str, function, class_info, enclosing, self_value, top) -> "Scope":
        """The scope a call made from this one runs its callee in (calls.py asks for it here rather than importing
        this module, which imports calls.py)."""
        return Scope(self.a, "function", grad, function=function, class_info=class_info, parent=self,
                     enclosing=enclosing, self_value=self_value, top=top)

    def call_chain(self) -> tuple:
        """The same-file calls that led here, innermost first: ((call node, top, calling Scope), ...)."""
        chain, scope = [], self
        while scope.parent is not None and scope.call_site is not None:
            chain.append((scope.call_site[0], scope.call_site[1], scope.parent))
            scope = scope.parent
        return tuple(chain)

    def ancestors(self) -> list:
        out, scope = [], self
        while scope is not None:
            out.append(scope)
            scope = scope.parent
        return out

    # ---- problems -------------------------------------------------------
    def _problem(self, problem: Problem, grad: str = GRAD_ON) -> None:
        if self.a.silent:
            return
        if problem.top is None:
            problem.top = self.top
        self.run.created.append(problem)
        if grad == GRAD_UNKNOWN:
            self.run.unknown_grad_problems.append(problem)
            return
        self.facts.add_problem(problem)

    def settle_unknown_grad(self) -> None:
        """A function that calls backward() itself runs with grad enabled: its leaf writes are certain errors."""
        if self.run.saw_backward:
            for problem in self.run.unknown_grad_problems:
                self.facts.add_problem(problem)
        self.run.unknown_grad_problems = []

    def finish(self) -> None:
        """Facts that fixes need about the whole run."""
        for problem in self.run.created:
            problem.detail.setdefault("loop_backward", self.run.loop_backward)

    def new_seq(self) -> int:
        return next(self.facts.seq)

    @property
    def iteration_key(self) -> tuple:
        return tuple(f.iteration for f in self.loops)

    def branch_path(self, node: cst.CSTNode, arm: int) -> tuple:
        return self.path + ((id(node), self.iteration_key, arm),)

    def record_name(self, node: cst.Name, value) -> None:
        if isinstance(value, Tensor):
            self.facts.name_values[id(node)] = value
            self.facts.note_state(node, value, self.grad_flag, self.grad)

    def step(self, stmt=None) -> bool:
        """Count one interpreted statement; past the budget note where (once per run); False once the second
        allowance is spent too."""
        a = self.a
        a.steps += 1
        if a.cancelled is not None and not a.steps & 127 and a.cancelled():
            raise AnalysisCancelled  # a newer edit of the document: its analysis replaces this one
        if a.steps > a.max_steps and "statements" not in a.budget_noted:
            a.note_budget_cut(self, stmt, "statements", f"the analysis budget ({a.max_steps:,} interpreted statements) "
                              "ran out at this line: the rest of this block was not checked in full (its loops ran "
                              "once from here)")
        return a.steps <= 2 * a.max_steps

    # ---- names ----------------------------------------------------------
    def bind_parameters(self, fn: cst.FunctionDef) -> None:
        """A function analysed on its own: its parameters are unknown until used as tensors."""
        params = fn.params
        for p in list(params.posonly_params) + list(params.params) + list(params.kwonly_params):
            self.params.add(p.name.value)
        self.note_locals(fn)

    def note_locals(self, fn) -> None:
        """Names a function assigns are its locals (Python's rule); other names are read from the module."""
        if type(fn) is cst.Lambda:
            return
        self.local_names = self.a.local_names_of(fn)
        self.global_names = self.a.global_decls_of(fn)

    def lookup(self, name: str):
        if name in self.env:
            return self.env[name]
        if self.kind == "module" or name in self.params or (name in self.local_names and name not in self.global_names):
            return None
        scope = self.enclosing
        while scope is not None:
            if name in scope.env:
                if self.a.summaries.recording:
                    self.a.summaries.note_external_read(scope.env, name, scope.env[name], enclosing=True)
                return scope.env[name]
            if scope.kind == "module":
                break
            scope = scope.enclosing
        return self.global_value(name)

    def global_value(self, name: str):
        """A module-level name read inside a function."""
        module = self.globals_scope
        if module is not None and module is not self:
            if name in module.env:
                if self.a.summaries.recording:
                    self.a.summaries.note_external_read(module.env, name, module.env[name])
                return module.env[name]
            if self.a.summaries.recording:
                self.a.summaries.note_external_read(module.env, name, UNBOUND)  # bound later: not the same read
            return self.a.definition_value(name)
        if name in self.global_cache:
            return self.global_cache[name]
        value = self.a.definition_value(name)
        if value is None:
            # A function analysed on its own sees module-level models, optimizers and tensors bound once at
            # module level, evaluated afresh here (fresh version state: nothing the module code did to them).
            expr = self.a.single_global_binding(name)
            if expr is not None:
                self.global_cache[name] = None  # `x = f(x)` must not recurse
                saved_stmt, saved_top = self.stmt, self.top
                value = self.expressions.eval(self, expr)
                self.stmt, self.top = saved_stmt, saved_top
                if isinstance(value, (Tensor, Module)) and not value.name:
                    value.name = name
        self.global_cache[name] = value
        return value

    def materialize_param(self, node: cst.Name) -> Tensor | None:
        """A function parameter used as a tensor operand: a tensor, requires_grad unknown."""
        name = node.value
        if name in self.params and name not in self.env:
            t = self.tensors.new_tensor(self, requires_grad=None, is_leaf=None, origin=node, created_by="a parameter of the function",
                                name=name)
            t.counter.known_start = False
            self.env[name] = t
            return t
        return None

    # ---- statements -----------------------------------------------------
    def run_body(self, stmts) -> None:
        for stmt in stmts:
            if self.returned:
                break  # a `return` on every path ran: the rest of the body never runs
            self.run_stmt(stmt)

    def run_stmt(self, stmt: cst.CSTNode) -> None:
        if not self.step(stmt):
            return
        if type(stmt) is cst.SimpleStatementLine:
            for small in stmt.body:
                self.stmt = stmt
                self.run_small(small, stmt)
        elif type(stmt) in (cst.For, cst.While):
            self.run_loop(stmt)
        elif type(stmt) is cst.If:
            self.run_if(stmt)
        elif type(stmt) is cst.With:
            self.run_with(stmt)
        elif type(stmt) is cst.Try:
            self.run_try(stmt)
        elif type(stmt) is cst.FunctionDef:
            self.env[stmt.name.value] = self.a.function_value(stmt, enclosing=self if self.kind != "module" else None,
                                                              top=self.top)
        elif type(stmt) is cst.ClassDef:
            self.env[stmt.name.value] = self.a.class_value(stmt.name.value)
        elif type(stmt) is cst.Match:
            self.expressions.eval(self, stmt.subject)
            arms = []
            for i, case in enumerate(stmt.cases):
                saved = self.path
                self.path = self.branch_path(stmt, i)
                arms.append(self.env.run_arm(lambda: self.run_body(case.body.body)))
                self.path = saved
            arms.append({})  # no case matched
            self.join_arms(arms)

    def _linked_value(self, local: str):
        """What `from m import local` binds when `local` is linked from a project file: its def or class, or the
        value of the module-level assignment that binds it there (a config dict), evaluated at the import."""
        value = self.a.definition_value(local)
        if value is None:
            expr = self.a.single_global_binding(self.a.linked_aliases.get(local, local))
            if expr is not None:
                saved_stmt, saved_top = self.stmt, self.top
                value = self.expressions.eval(self, expr)
                self.stmt, self.top = saved_stmt, saved_top
        return value

    def run_small(self, small: cst.BaseSmallStatement, stmt) -> None:
        if type(small) is cst.Assign:
            value = self.expressions.eval(self, small.value)
            for target in small.targets:
                self.assign(target.target, value, small.value, stmt)
        elif type(small) is cst.AnnAssign:
            if small.value is not None:
                value = self.expressions.eval(self, small.value)
                self.assign(small.target, value, small.value, stmt)
        elif type(small) is cst.AugAssign:
            self.run_augassign(small, stmt)
        elif type(small) is cst.Expr:
            value = self.expressions.eval(self, small.value)
            if type(small.value) is cst.Call:
                q = self.a.callee_qualname(small.value) if not self.expressions._bound_head(self, small.value.func) else None
                if q in ("torch.set_grad_enabled", "torch.autograd.set_grad_enabled"):
                    marker_mode = getattr(value, "mode", None)
                    if marker_mode is not None:
                        self.grad = marker_mode  # `torch.set_grad_enabled(False)` as a statement switches the mode
        elif type(small) is cst.Return:
            value = self.expressions.eval(self, small.value) if small.value is not None else Literal(None)
            self.returns.append(value)
            self.tensors.escape(self, value, small)
            if self.kind == "function" and self.path == self.base_path:
                self.returned = True
        elif type(small) is cst.ImportFrom and self.kind == "module" and self.a.linked_names:
            # `from losses import nt_xent` binds the definition linked from the project file (project.py)
            names = () if type(small.names) is cst.ImportStar else small.names
            for alias in names:
                local = alias.asname.name.value if alias.asname is not None and type(alias.asname.name) is cst.Name \
                    else (alias.name.value if type(alias.name) is cst.Name else "")
                if local in self.a.linked_names:
                    self.env[local] = self._linked_value(local)
            if type(small.names) is cst.ImportStar:
                for local in self.a.linked_names:
                    if local not in self.env:
                        self.env[local] = self._linked_value(local)
        elif type(small) is cst.Del:
            targets = [e.value for e in small.target.elements] if type(small.target) is cst.Tuple else [small.target]
            for target in targets:
                if type(target) is cst.Subscript:
                    self._del_item(target)
            for target in _names_in(small.target):
                self.env.pop(target, None)
        elif type(small) in (cst.Global, cst.Nonlocal):
            for n in small.names:
                self.params.discard(n.name.value)

    def _del_item(self, target: cst.Subscript) -> None:
        """`del self.rewards[:]` empties a list; `del xs[i]` leaves one of unknown content."""
        seq = self.expressions.eval(self, target.value)
        if isinstance(seq, DictVal):
            seq.items = None  # `del cache[key]`: which keys are left is not followed
            return
        if not isinstance(seq, Seq):
            return
        whole = len(target.slice) == 1 and isinstance(target.slice[0].slice, cst.Slice) and all(
            part is None for part in (target.slice[0].slice.lower, target.slice[0].slice.upper, target.slice[0].slice.step))
        if whole:
            self.calls.clear_list(self, seq)
        elif seq.items is not None:
            self.calls._list_unknown(self, seq, None)

    # ---- loops ----------------------------------------------------------
    def run_loop(self, stmt) -> None:
        iterable = self.expressions.iterated(self, self.expressions.eval(self, stmt.iter), stmt.iter) if type(stmt) is cst.For else None
        items = self.expressions.iteration_items(self, iterable) if type(stmt) is cst.For else None
        passes = self._loop_passes(stmt, items)
        saved_path = self.path
        start_seq = self.new_seq()
        for iteration in range(passes):
            if self.returned or (iteration > 0 and self.a.steps > self.a.max_steps):
                break  # past the budget a loop that is running finishes its pass, and runs no more
            frame = LoopFrame(stmt, iteration, self, start_seq)
            self.loops.append(frame)
            if iteration > 0:
                self._note_carries(stmt)
            if type(stmt) is cst.For:
                element = items[iteration] if items is not None else self.expressions.element_of(self, iterable, stmt.iter)
                if items is None:
                    frame.element_saves = SharedSet.union(t.history for t in flat_tensors([element]))
                self.assign(stmt.target, element, stmt.iter, stmt)
            else:
                self.expressions.eval(self, stmt.test)
            self.run_body(stmt.body.body)
            self.loops.pop()
        self.path = saved_path
        for key, v in list(self.run.assigned_in_loop.items()):
            if stmt in v[2]:
                owners = tuple(loop for loop in v[2] if loop is not stmt)
                if owners:
                    self.run.assigned_in_loop[key] = (v[0], v[1], owners) + v[3:]
                else:
                    del self.run.assigned_in_loop[key]
        if stmt.orelse is not None:
            self.run_body(stmt.orelse.body.body)

    def _loop_passes(self, stmt, items) -> int:
        if self.a.steps > self.a.max_steps // 2:
            return 1
        if _breaks_in_first_pass(stmt):
            return 1  # `for batch in loader: ...; break`: nothing of a second pass runs
        depth = len(self.loops)
        default = 1 if depth >= 2 else (2 if depth == 1 else 3)
        if items is not None:
            # a known sequence (layers of a ModuleList, `range(3)`): its real length, up to a bound
            return len(items)  # iteration_items bounds it
        return default

    def _note_carries(self, loop) -> None:
        run = self.run
        for key, (assign_stmt, value_node, owner, top, display, obj) in list(run.assigned_in_loop.items()):
            if loop not in owner:
                continue
            if obj is None:
                if key[0] != self.serial:
                    continue
                value = self.env.get(key[1])
            else:
                value = _attrs_of(obj).get(key[1])
            history = SharedSet.union(t.history for t in flat_tensors([value]))
            if history:
                carry = Carry(display, assign_stmt, value_node, history, loop, value, top=top)
                run.carries.append(carry)
                run.pending[key] = carry

    def note_read(self, key, value, node) -> None:
        """The first read of carried state in the next iteration marks the carry as used."""
        carry = self.run.pending.get(key)
        if carry is not None and carry.tensor is value and not carry.used:
            carry.used = True
            carry.use_node = node
            carry.use_top = self.top

    def note_assignment(self, key, display: str, stmt, value_node, obj=None) -> None:
        self.run.pending.pop(key, None)
        if self.loops:
            # every enclosing loop: state re-bound in an inner loop reaches the inner loop's next pass and the
            # outer loop's next pass (a problem needs a backward or step in between, so carrying within a
            # sequence and back-propagating after it stays quiet)
            owners = tuple(f.node for f in self.loops)
            self.run.assigned_in_loop[key] = (stmt, value_node, owners, self.top, display, obj)
            if self.a.summaries.recording:
                self.a.summaries.note_loop_assignment(key, obj)

    # ---- branches -------------------------------------------------------
    def run_if(self, stmt: cst.If) -> None:
        test = self.expressions.eval(self, stmt.test)
        decided = truth(test)
        option = self._option_flag(stmt.test) if decided is not None else None
        if option is not None:
            # `if init_uniform:` with init_uniform=False by default: one argument runs the other arm
            return self._run_option_arms(stmt, decided, option)
        if decided is True:
            self.run_body(stmt.body.body)
            return
        if decided is False:
            self._run_orelse(stmt.orelse)
            return
        guard = _is_guard(stmt.test)
        saved = self.path
        if guard:
            self.guarded += 1
        self.path = self.branch_path(stmt, 0)
        arms = [self.env.run_arm(lambda: self.run_body(stmt.body.body))]
        self.path = self.branch_path(stmt, 1)
        arms.append(self.env.run_arm(lambda: self._run_orelse(stmt.orelse)))
        self.path = saved
        if guard:
            self.guarded -= 1
        self.join_arms(arms)

    def _option_flag(self, test) -> tuple[str, bool] | None:
        """(name, its default) when the test is `name` or `not name` and the name holds a bool parameter's default."""
        node = test.expression if type(test) is cst.UnaryOperation and type(test.operator) is cst.Not else test
        if type(node) is not cst.Name:
            return None
        value = self.env.get(node.value) if node.value in self.env else None
        return (node.value, value.value) if isinstance(value, OptionDefault) else None

    def _run_option_arms(self, stmt: cst.If, decided: bool, option: tuple[str, bool]) -> None:
        """The default's arm runs as before; the other arm runs for what it proves (its writes carry the condition),
        and its names and returns are dropped: the values after the branch stay the default's (joining them lost
        the tuple of `return z if no_dec else (x, mu, z)` and the bugs that use it)."""
        name, default = option
        condition = f"`{name}` is {'false' if default else 'true'}"
        saved, outer = self.path, self.option_condition
        arms = []
        for i, live in ((0, decided), (1, not decided)):
            self.path = self.branch_path(stmt, i)
            run = (lambda: self.run_body(stmt.body.body)) if i == 0 else (lambda: self._run_orelse(stmt.orelse))
            if live:
                # the default's arm is what a default construction runs: what it sets on `self` holds after the
                # branch (`self.token = nn.Sequential(self.token, nn.Sigmoid())` under `if probabilities:`)
                self.path = saved
                arms.append(self.env.run_arm(run))
                continue
            self.option_condition = condition
            returns, yields, returned = len(self.returns), len(self.yields), self.returned
            self.env.run_arm(run)
            del self.returns[returns:], self.yields[yields:]
            self.returned = returned
            self.option_condition = outer
        self.path = saved
        self.join_arms(arms)

    def _run_orelse(self, orelse) -> None:
        if orelse is None:
            return
        if type(orelse) is cst.If:
            self.run_if(orelse)
        else:
            self.run_body(orelse.body.body)

    def join_arms(self, arms: list[dict]) -> None:
        """After a branch (the environment is as before it; `arms` are what each arm changed, from
        `Env.run_arm`): a name keeps a value only if every arm agrees on it (or on a joinable value). A name an
        arm deleted keeps its value from before the branch there; one no arm left bound stays unbound."""
        env = self.env
        names = {}  # ordered: joining in a hash-seed order made results vary between runs
        for arm in arms:
            names.update(dict.fromkeys(arm))
        for name in names:
            before = dict.get(env, name, _MISSING)
            values = [arm.get(name, _MISSING) for arm in arms]
            if before is _MISSING and all(v is _MISSING for v in values):
                continue
            fallback = None if before is _MISSING else before
            values = [fallback if v is _MISSING else v for v in values]
            first = values[0]
            if all(v is first for v in values):
                env[name] = first
            else:
                joined = env[name] = self.expressions.join_values(self, values)
                if isinstance(joined, Tensor) and len(values) == 2 and all(isinstance(v, Tensor) for v in values):
                    # `if c: x = a` / `else: x = b`: a save of `x` watches both arms' counters (as `a if c else b`)
                    joined.alternatives, joined.alternatives_top = tuple(values), self.top
                self.params.discard(name)

    def run_with(self, stmt: cst.With) -> None:
        saved = self.grad, self.inference, self.grad_flag
        for item in stmt.items:
            value = self.expressions.eval(self, item.item)
            mode = getattr(value, "mode", None)
            if mode is not None:
                self.grad = mode
                self.grad_flag = getattr(value, "flag", "")
                if getattr(value, "inference_call", None) is not None:
                    self.inference = value.inference_call
                elif getattr(value, "leaves_inference", False):
                    self.inference = None  # `inference_mode(False)`: normal tensors again
            elif item.asname is not None:
                self.assign(item.asname.name, None, item.item, stmt)
        self.run_body(stmt.body.body)
        self.grad, self.inference, self.grad_flag = saved

    def run_try(self, stmt: cst.Try) -> None:
        saved = self.path
        self.path = self.branch_path(stmt, 0)
        self.run_body(stmt.body.body)
        if stmt.orelse is not None:
            self.run_body(stmt.orelse.body.body)
        for i, handler in enumerate(stmt.handlers):
            self.path = self.branch_path(stmt, i + 1)
            self.run_body(handler.body.body)
        self.path = saved
        if stmt.finalbody is not None:
            self.run_body(stmt.finalbody.body.body)

    # ---- assignment -----------------------------------------------------
    def assign(self, target: cst.BaseExpression, value, value_node, stmt) -> None:
        if type(target) is cst.Name:
            name = target.value
            if name in self.global_names and self.globals_scope is not None and self.globals_scope is not self:
                if self.a.summaries.recording:
                    self.a.summaries.note_external_write()
                self.globals_scope.env[name] = value
            else:
                self.env[name] = value
            self.params.discard(name)
            self.record_name(target, value)
            if isinstance(value, Tensor) and type(value_node) is cst.Call and value.origin is not value_node \
                    and value.origin is not None:
                # `d_fake = self.D(fake)`: the tensor was made inside the call; hover names this line first
                self.facts.returned_at[id(value)] = (value_node, self.top)
            if isinstance(value, (Tensor, Module, Instance)) and not value.name:
                value.name = name
            self.note_assignment((self.serial, name), name, stmt, value_node)
        elif type(target) in (cst.Tuple, cst.List):
            elements = [e.value for e in target.elements]
            items = None
            starred = next((i for i, e in enumerate(target.elements) if type(e) is cst.StarredElement), None)
            if isinstance(value, Seq) and value.items is None and value.sizes_of is not None and starred is None:
                items = [Dim(value.sizes_of, i, len(elements)) for i in range(len(elements))]
            elif isinstance(value, Seq):
                items = value.items if value.items is not None else [value.element] * len(elements)
            elif isinstance(value, Tensor) and starred is None and _one_tensor(value):
                # `q, k, v = qkv.permute(2, 0, 3, 1, 4)` iterates dim 0, as `qkv.unbind(0)` does (torch 2.13: each
                # name is an UnbindBackward view of it, refused in-place writes while it requires grad)
                items = [self.tensors.view_of(self, value, value_node, "multi") for _ in elements]
            for i, element in enumerate(target.elements):
                if type(element) is cst.StarredElement:
                    self.assign(element.value, None, value_node, stmt)
                    continue
                if items is None:
                    item = None
                elif starred is not None and i > starred:
                    j = len(items) - (len(elements) - i)
                    item = items[j] if 0 <= j < len(items) else None
                else:
                    item = items[i] if i < len(items) else None
                self.assign(element.value, item, value_node, stmt)
        elif type(target) is cst.Attribute:
            owner = self.expressions.eval(self, target.value)
            attr = target.attr.value
            if isinstance(owner, (Module, Instance)):
                self.set_attr(owner, attr, value, target, value_node, stmt)
            elif isinstance(owner, Special) and owner.kind == "namespace" and owner.payload is not None:
                in_branch = len(self.path) > len(self.base_path)
                owner.payload[attr] = None if in_branch else value  # `args.device = ...` (on some paths: unknown)
            elif isinstance(owner, Tensor):
                if attr == "requires_grad":
                    self.tensors.set_requires_grad(self, owner, value)
                elif attr == "data":
                    pass  # `x.data = y` rebinds the storage: no version bump, no write through a counter
        elif type(target) is cst.Subscript:
            base = self.expressions.eval(self, target.value)
            self.expressions.eval_slices(self, target)
            if isinstance(base, Tensor):
                self.tensors.write(self, base, target, stmt, op="[]=", kind="setitem", value=value)
            elif isinstance(base, DictVal):
                # `cache[key] = value` (a prompt cached by a helper): known only for a literal key, on the branch
                # path where the dict literal was made; otherwise its content is unknown from here on
                key = self.expressions.dict_key(self, target)
                if base.items is not None and key is not None and self.path == base.path:
                    base.items[key] = value
                else:
                    base.items = None
            elif isinstance(base, Seq) and base.items is not None:
                index = self.expressions._literal_index(self, target)
                if index is not None and -len(base.items) <= index < len(base.items):
                    base.items[index] = value
                else:
                    base.items = None
            # An unknown parameter written by index is not proved a tensor: lists and dicts are written that way too
            # (`features[0] = self.block(features[0])` with `features: list[Tensor]`, in transformers' DepthPro).

    def set_attr(self, owner, attr: str, value, target, value_node, stmt) -> None:
        attrs = owner.attrs
        in_branch = len(self.path) > len(self.base_path)
        if in_branch and attr in attrs and attrs[attr] is not value:
            value = self.expressions.join_values(self, [attrs[attr], value])  # set on some paths only
        attrs[attr] = value
        if isinstance(value, (Tensor, Module)) and not value.name:
            value.name = f"{_display(target.value)}.{attr}"
        if isinstance(owner, Module):
            if isinstance(value, Module) or (isinstance(value, Tensor) and value.is_parameter):
                owner.has_params = self.modules.module_has_params(self, owner)
            if attr == "inplace":
                flag = truth(value)
                if flag is None or (in_branch and owner.inplace != flag):
                    owner.inplace = None
                else:
                    owner.inplace = flag
                    owner.inplace_site = (target, self.top)  # `m.inplace = True`: where the layer became in-place
        self.note_assignment((id(owner), attr), f"{_display(target.value)}.{attr}", stmt, value_node, owner)

    def run_augassign(self, small: cst.AugAssign, stmt) -> None:
        target_value = self.expressions.eval(self, small.target)
        # the container of `xs[i] += v`, read again only when reading has no effect (a name, an attribute)
        base = self.expressions.eval(self, small.target.value) if type(small.target) is cst.Subscript \
            and type(small.target.value) in (cst.Name, cst.Attribute) else None
        if isinstance(base, Seq):
            self.facts.list_item_targets.add(id(small.target))  # the fix may re-bind the item (fixes.out_of_place)
        value = self.expressions.eval(self, small.value)
        op = small.operator.__class__.__name__
        if target_value is None and type(small.target) is cst.Name and small.target.value in self.params:
            if isinstance(value, Tensor) or self._proves_tensor(small.target.value):
                target_value = self.materialize_param(small.target)
        if isinstance(target_value, Tensor) and isinstance(base, Tensor) and target_value.origin is small.target \
                and target_value.view_of is None:
            # `x[idx] += v` with advanced indexing adds into a copy, then `x[idx] = copy` (index_put_) writes `x`
            target_value = base
        if isinstance(target_value, Tensor):
            symbol = _AUG_SYMBOLS.get(op, "op=")
            self.tensors.write(self, target_value, small, stmt, op=symbol, kind="augassign", value=value)
            return
        if isinstance(target_value, Seq) and target_value.is_list and op == "AddAssign":
            self.calls.extend_list(self, target_value, value)
            return
        # Python numbers, unknowns: `a += b` rebinds a new value.
        result = None
        if isinstance(value, Tensor):
            result = self.tensors.new_tensor(self, requires_grad=value.requires_grad if self.grad != GRAD_OFF else False,
                                     is_leaf=not value.requires_grad if value.requires_grad is not None else None,
                                     origin=small, created_by="an augmented assignment", history=value.history)
        elif isinstance(target_value, Literal) and isinstance(value, Literal):
            result = self.expressions.literal_binop(self, target_value, value, op.replace("Assign", ""))
        if type(small.target) is cst.Name:
            self.env[small.target.value] = result
            self.params.discard(small.target.value)

    def _proves_tensor(self, name: str) -> bool:
        """`name.grad` was read as a tensor in this scope: the parameter is a tensor (a leaf that requires grad)."""
        return name in self.grad_proven

    @property
    def grad_proven(self) -> set:
        proven = self.__dict__.get("_grad_proven")
        if proven is None:
            proven = self.__dict__["_grad_proven"] = set()
        return proven


def _attrs_of(obj) -> dict:
    return getattr(obj, "attrs", {}) or {}


def _display(expr) -> str:
    if type(expr) is cst.Name:
        return expr.value
    if type(expr) is cst.Attribute:
        return f"{_display(expr.value)}.{expr.attr.value}"
    return "…"


def _names_in(expr) -> list[str]:
    if type(expr) is cst.Name:
        return [expr.value]
    if type(expr) in (cst.Tuple, cst.List):
        return [n for e in expr.elements for n in _names_in(e.value)]
    return []


def _is_guard(test: cst.BaseExpression) -> bool:
    return any(word in w for w in words(test) for word in GUARD_WORDS)


_AUG_SYMBOLS = {
    "AddAssign": "+=", "SubtractAssign": "-=", "MultiplyAssign": "*=", "DivideAssign": "/=",
    "PowerAssign": "**=", "MatrixMultiplyAssign": "@=", "FloorDivideAssign": "//=", "ModuloAssign": "%=",
    "BitAndAssign": "&=", "BitOrAssign": "|=", "BitXorAssign": "^=", "LeftShiftAssign": "<<=",
    "RightShiftAssign": ">>=",
}

__all__ = ["Scope", "Carry", "RunState", "LoopFrame", "GRAD_ON", "GRAD_OFF", "GRAD_UNKNOWN", "FunctionRef",
           "walk_statements"]


def _breaks_in_first_pass(loop) -> bool:
    """The loop's body reaches a `break` among its own statements (not inside an `if`), and no `continue` of this
    loop comes before it: the body runs once at most."""
    for stmt in loop.body.body:
        if type(stmt) is cst.SimpleStatementLine:
            kinds = {type(small) for small in stmt.body}
            if cst.Continue in kinds:
                return False
            if cst.Break in kinds:
                return True
            continue
        stack = [stmt]
        while stack:
            node = stack.pop()
            if type(node) is cst.Continue:
                return False
            if type(node) not in (cst.For, cst.While, cst.FunctionDef, cst.ClassDef, cst.Lambda) or node is stmt:
                stack.extend(node.children)
    return False


def _one_tensor(t: Tensor) -> bool:
    """The value is one tensor for sure, not a tuple the analysis could not tell apart (an unknown `x.max(1)` or
    `torch.max(x, 1)` gives (values, indices)): a view of a tensor, or a tensor method that returns one
    (`.reshape()`, `.contiguous()`, `.clone()`)."""
    if t.view_of is not None:
        return True
    return t.created_by.startswith("`.") and t.created_by.endswith("()`")
