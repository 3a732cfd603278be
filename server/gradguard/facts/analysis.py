"""The one analysis pass: an abstract interpreter over each scope's statements.

It walks a scope (the module's own statements, each function, each method)
in execution order and keeps, for every local name and `self.<attr>`, the
abstract value the code proves (`model.Tensor`, `Module`, `Optimizer`, ...).
Ops consult the op table to record which tensors are saved for backward and
at which version; in-place writes bump version counters; `backward()` (and a
`return` from a function, after which the caller runs backward) checks the
saved versions. Loops run their body several times so that a write in
iteration k+1 meets a save from iteration k. Branches tag events with a path
so that a save in one arm never meets a write in the other.

Everything it is not sure of is unknown, and unknowns never produce problems.
"""
from __future__ import annotations

import dataclasses
import itertools
import re
from dataclasses import dataclass, field

import libcst as cst

from ..ops import OpRow, load_op_table
from .model import (
    GRAD_OFF,
    GRAD_ON,
    GRAD_UNKNOWN,
    Counter,
    Literal,
    Module,
    Optimizer,
    ParamsOf,
    Problem,
    Save,
    Seq,
    Storage,
    Tensor,
    Write,
)
from .names import canonical, collect_imports, dotted

TENSOR_FACTORIES = {
    "torch." + n
    for n in (
        "rand randn zeros ones empty full tensor arange linspace logspace eye rand_like randn_like zeros_like "
        "ones_like empty_like full_like randint randint_like randperm as_tensor from_numpy normal"
    ).split()
}
# Methods of a tensor that make a new, unrelated tensor (no alias, no save).
FRESH_METHODS = set("new_zeros new_ones new_empty new_full new_tensor".split())
# Methods that keep the graph but may or may not alias: treated as new values without an alias (a miss, not a false alarm).
COPYISH_METHODS = set(
    "to float double half bfloat16 cuda cpu type type_as contiguous reshape reshape_as flatten "
    "squeeze_copy view_copy".split()
)
NON_TENSOR_METHODS = set(
    "item tolist numpy size dim numel nelement element_size stride storage_offset data_ptr is_contiguous "
    "is_floating_point is_complex untyped_storage get_device __len__ equal allclose".split()
)
# Ops whose result is outside the graph (integer or boolean results): they must not carry history.
NONDIFF = set(
    "gt lt ge le eq ne greater less greater_equal less_equal not_equal argmax argmin argsort isnan isinf isfinite "
    "isclose nonzero any all bool long int short byte char logical_not logical_and logical_or logical_xor bitwise_not "
    "bitwise_and bitwise_or signbit count_nonzero bincount unique searchsorted bucketize histc".split()
)
# `*_` methods that do not write tensor data.
NOT_WRITES = set("requires_grad_ share_memory_ retain_grad_ detach_ _version".split())
INPLACE_MODULE_ARG_POS = {
    # positional index of `inplace` in the constructors of torch.nn activations
    "torch.nn.ReLU": 0,
    "torch.nn.ReLU6": 0,
    "torch.nn.SELU": 0,
    "torch.nn.SiLU": 0,
    "torch.nn.Mish": 0,
    "torch.nn.Hardswish": 0,
    "torch.nn.Hardsigmoid": 0,
    "torch.nn.LeakyReLU": 1,
    "torch.nn.ELU": 1,
    "torch.nn.CELU": 1,
    "torch.nn.Dropout": 1,
    "torch.nn.Dropout1d": 1,
    "torch.nn.Dropout2d": 1,
    "torch.nn.Dropout3d": 1,
    "torch.nn.AlphaDropout": 1,
    "torch.nn.Hardtanh": 2,
    "torch.nn.Threshold": 2,
}
MODULE_BASES = {"torch.nn.Module", "torch.nn.Sequential", "torch.nn.ModuleList", "lightning.LightningModule",
                "pytorch_lightning.LightningModule", "lightning.pytorch.LightningModule"}
GRAD_CONTEXTS = {
    "torch.no_grad": GRAD_OFF,
    "torch.inference_mode": GRAD_OFF,
    "torch.enable_grad": GRAD_ON,
    "torch.autograd.no_grad": GRAD_OFF,
    "torch.autograd.grad_mode.no_grad": GRAD_OFF,
    "torch.autograd.grad_mode.inference_mode": GRAD_OFF,
    "torch.autograd.enable_grad": GRAD_ON,
}
# Method names whose body runs in grad mode when they run at all.
GRAD_METHODS = {"forward", "training_step", "__call__"}
# Words in an `if` test that make its arms mode-dependent (training vs eval, grad vs no grad, scripting).
GUARD_WORDS = ("training", "grad", "inference", "is_scripting", "is_tracing", "jit", "inplace", "export", "compil")


@dataclass
class ClassInfo:
    """What calling a class of the user's code means: a module with how many weight-holding layers."""

    name: str
    node: cst.ClassDef
    is_module: bool
    attrs: dict[str, cst.BaseExpression] = field(default_factory=dict)  # self.<attr> = <expr> in __init__
    param_layers: int = 0
    unknown_children: int = 0


_LIBRARY_ROOTS = {"torch", "numpy", "np", "os", "sys", "math", "random", "typing", "collections", "functools",
                  "itertools", "dataclasses", "pathlib", "json", "re", "time", "logging", "argparse", "abc",
                  "copy", "warnings", "contextlib", "enum", "inspect", "torchvision", "transformers", "timm"}


@dataclass(eq=False)
class Carry:
    """A name re-bound inside a loop whose tensor (and graph) reaches the next iteration."""

    name: str
    stmt: cst.CSTNode
    value_node: cst.BaseExpression
    history: frozenset
    loop: cst.CSTNode
    tensor: object = None
    used: bool = False  # read in the next iteration before being re-bound
    use_node: cst.Name | None = None  # that first read (a fix can detach it there)
    use_top: cst.CSTNode | None = None


class _ContextMarker:
    def __init__(self, mode: str, inference_call: cst.Call | None = None):
        self.mode = mode
        self.inference_call = inference_call  # the `torch.inference_mode()` call, for inference-tensor facts


@dataclass
class TensorFacts:
    """What hover shows about a tensor name."""

    name: str
    is_leaf: bool | None
    requires_grad: bool | None
    created: object | None  # Span
    created_by: str
    saves: list  # [(op, Span, version)]
    writes: list  # [(op, Span, version_after)]
    is_parameter: bool = False
    shares_counter_with: str = ""  # "a view of `x`", "`x` (detach)"
    data_alias_of: str = ""


def _first_per_span(items):
    """Loops are interpreted several times; hover lists each place once (its first version)."""
    seen = set()
    out = []
    for item in items:
        if item[1] is not None and (item[0], item[1]) not in seen:
            seen.add((item[0], item[1]))
            out.append(item)
    return out


class Facts:
    """What the analysis proved about one file."""

    def __init__(self):
        self.problems: list[Problem] = []
        self.name_values: dict[int, Tensor] = {}  # id(Name node) -> Tensor at that point
        self.expr_values: dict[int, Tensor] = {}  # id(expression node) -> the Tensor it evaluated to
        self.seq = itertools.count(1)
        self._seen_problems: set = set()
        self.saves: list[Save] = []
        self.locator = None  # set by the engine: finds nodes' spans
        self.imports: dict[str, str] = {}

    def merge(self, other: "Facts") -> None:
        """Add a block's cached facts to this file's."""
        for problem in other.problems:
            self.add_problem(problem)
        self.name_values.update(other.name_values)
        self.expr_values.update(other.expr_values)
        self.saves.extend(other.saves)

    def tensor_at(self, line: int, col: int) -> TensorFacts | None:
        """Facts about the tensor named at a 0-based (line, code-point column), if the analysis knows it."""
        if self.locator is None:
            return None
        for pb in self.locator.blocks:
            if not (pb.block.start_line <= line < pb.block.end_line):
                continue
            pb.span(pb.module)  # make sure positions are computed for this block
            for node, pos in pb.parsed.positions.items():
                if not isinstance(node, cst.Name) or id(node) not in self.name_values:
                    continue
                start_line = pos.start.line - 1 + pb.block.start_line
                if start_line == line and pos.start.column <= col <= pos.end.column:
                    return self.describe(self.name_values[id(node)], node.value, hint_block=pb)
        return None

    def describe(self, t: Tensor, name: str, hint_block=None) -> TensorFacts:
        loc = self.locator

        def span(node, top=None):
            return loc.span(node, top) if node is not None else None

        saves = [(s.op, span(s.node, s.top), s.version) for s in self.saves if s.counter is t.counter]
        writes = [(w.op, span(w.node, w.top), w.version_after) for w in t.counter.writes]
        shares = ""
        if t.view_kind == "detach" and t.view_of is not None:
            shares = f"`{t.view_of.name}` (detach() shares its storage and version counter)"
        elif t.view_of is not None:
            shares = f"a view of `{t.base.name}` (same storage and version counter)"
        return TensorFacts(name, t.is_leaf, t.requires_grad, span(t.origin), t.created_by,
                           _first_per_span(saves), _first_per_span(writes), t.is_parameter, shares,
                           f"`{t.data_of.name}`" if t.data_of is not None else "")

    def add_problem(self, problem: Problem) -> None:
        if problem.top is None and problem.write is not None:
            problem.top = problem.write.top
        key = (problem.kind, id(problem.node), id(problem.save.node) if problem.save else None, id(problem.carry))
        if key in self._seen_problems:
            return
        self._seen_problems.add(key)
        self.problems.append(problem)


class FileAnalysis:
    """Runs the interpreter over every scope of one file's parsed blocks."""

    def __init__(self, modules: list[cst.Module], quiet_modules: set[int] | frozenset = frozenset(),
                 block_cache: dict | None = None, external_classes=None, hot_text: str = ""):
        self.block_cache = block_cache
        # quiet_modules: ids of block modules whose text has no in-place write, step() or backward(): their
        # functions cannot produce a problem, so they are not interpreted (the module-level code always is).
        self.quiet_modules = quiet_modules
        self.modules = modules
        self.facts = Facts()
        self.ops = load_op_table()
        self.imports: dict[str, str] = {}
        self.classes: dict[str, ClassInfo] = {}
        self.functions: dict[str, cst.FunctionDef] = {}
        statements = [stmt for m in modules for stmt in m.body]
        self.statements = statements
        collect_imports(statements, self.imports)
        for stmt in statements:
            if isinstance(stmt, cst.ClassDef):
                self._collect_class(stmt)
            elif isinstance(stmt, cst.FunctionDef):
                self.functions[stmt.name.value] = stmt
        self._settle_classes()
        if external_classes is not None and hot_text:
            # Classes imported from the user's other modules (`from model import Net`), summarised from their
            # files; only names that the interpreted blocks call are looked up (it costs file-system probes).
            for local, full in self.imports.items():
                if full.split(".")[0] in _LIBRARY_ROOTS or local in self.classes or not local[:1].isupper():
                    continue
                if not re.search(r"\b" + re.escape(local) + r"\s*\(", hot_text):
                    continue
                info = external_classes(full)
                if info is not None:
                    self.classes[full] = info

    # ---- classes --------------------------------------------------------
    def _collect_class(self, node: cst.ClassDef) -> None:
        bases = [canonical(self.resolve_dotted(a.value) or "") for a in node.bases]
        info = ClassInfo(node.name.value, node, any(b in MODULE_BASES or b in self.classes and self.classes[b].is_module for b in bases))
        if not info.is_module:
            info.is_module = any(b in self.classes and self.classes[b].is_module for b in (dotted(a.value) for a in node.bases))
        for item in node.body.body:
            if isinstance(item, cst.FunctionDef) and item.name.value == "__init__":
                for stmt in _walk_statements(item.body.body):
                    if isinstance(stmt, cst.SimpleStatementLine):
                        for small in stmt.body:
                            if isinstance(small, cst.Assign) and len(small.targets) == 1:
                                target = small.targets[0].target
                                if (isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name)
                                        and target.value.value == "self"):
                                    info.attrs[target.attr.value] = small.value
        self.classes[info.name] = info

    def _settle_classes(self) -> None:
        """Count the parameter-bearing layers of each module class (for 'calling it saves its weights')."""
        for info in self.classes.values():
            if not info.is_module:
                continue
            for expr in info.attrs.values():
                self._count_layers(expr, info)

    def _count_layers(self, expr, info: ClassInfo) -> None:
        q = self.callee_qualname(expr) if isinstance(expr, cst.Call) else None
        if q is None:
            return
        if q == "torch.nn.Parameter":
            info.param_layers += 1
            return
        row = self.ops.by_name.get(q)
        if row is not None and row.kind == "module":
            info.param_layers += 1 if row.params else 0
        elif q in ("torch.nn.Sequential", "torch.nn.ModuleList"):
            for arg in expr.args:
                if isinstance(arg.value, cst.Call):
                    self._count_layers(arg.value, info)
                elif isinstance(arg.value, (cst.List, cst.Tuple)):
                    for element in arg.value.elements:
                        self._count_layers(element.value, info)
                else:
                    info.unknown_children += 1
        elif q in self.classes and q != info.name:
            other = self.classes[q]
            info.param_layers += other.param_layers
            info.unknown_children += other.unknown_children
        elif q.startswith("torch.nn."):
            info.unknown_children += 1

    # ---- names ----------------------------------------------------------
    def resolve_dotted(self, expr: cst.BaseExpression) -> str | None:
        name = dotted(expr)
        if name is None:
            return None
        head, _, rest = name.partition(".")
        if head in self.imports:
            full = self.imports[head] + ("." + rest if rest else "")
            return canonical(full)
        if head in self.classes and not rest:
            return head
        return None

    def callee_qualname(self, call: cst.Call) -> str | None:
        return self.resolve_dotted(call.func)

    # ---- driving --------------------------------------------------------
    def run(self) -> Facts:
        self.facts.imports = self.imports
        module_scope = Scope(self, kind="module", grad=GRAD_ON)
        if len(self.quiet_modules) < len(self.modules):
            for stmt in self.statements:
                module_scope.top = stmt
                module_scope.run_stmt(stmt)
            module_scope.finish()
        signature = self._context_signature()
        file_facts = self.facts
        for module in self.modules:
            if id(module) in self.quiet_modules:
                continue
            if not any(isinstance(stmt, (cst.FunctionDef, cst.ClassDef)) for stmt in module.body):
                continue
            # A def/class block's scopes depend only on its own text and on the file's imports and classes:
            # results are cached per block, so an edit in one function re-interprets that function only.
            key = (id(module), signature)
            cached = self.block_cache.get(key) if self.block_cache is not None else None
            if cached is None or cached[0] is not module:
                self.facts = Facts()
                self.facts.imports = self.imports
                for stmt in module.body:
                    self._run_definitions(stmt, class_info=None, top=stmt)
                cached = (module, self.facts)
                if self.block_cache is not None:
                    self.block_cache[key] = cached
                self.facts = file_facts
            file_facts.merge(cached[1])
        return file_facts

    def _context_signature(self) -> tuple:
        classes = tuple(sorted((c.name, c.is_module, c.param_layers, c.unknown_children, tuple(sorted(c.attrs)))
                               for c in self.classes.values()))
        return (tuple(sorted(self.imports.items())), classes)

    def _run_definitions(self, stmt: cst.CSTNode, class_info: ClassInfo | None, top: cst.CSTNode) -> None:
        if isinstance(stmt, cst.FunctionDef):
            scope = Scope(self, kind="function", grad=self._function_grad_mode(stmt, class_info),
                          function=stmt, class_info=class_info)
            scope.top = top
            scope.bind_parameters(stmt)
            scope.run_body(stmt.body.body)
            scope.settle_unknown_grad()
            scope.finish()
            for inner in _walk_statements(stmt.body.body):
                if inner is not stmt and isinstance(inner, (cst.FunctionDef, cst.ClassDef)):
                    self._run_definitions(inner, None, top)
        elif isinstance(stmt, cst.ClassDef):
            info = self.classes.get(stmt.name.value)
            for inner in stmt.body.body:
                self._run_definitions(inner, info if info and info.is_module else None, top)

    def _function_grad_mode(self, fn: cst.FunctionDef, class_info: ClassInfo | None) -> str:
        for deco in fn.decorators:
            target = deco.decorator.func if isinstance(deco.decorator, cst.Call) else deco.decorator
            q = self.resolve_dotted(target)
            if q in GRAD_CONTEXTS:
                return GRAD_CONTEXTS[q]
            if q and ("no_grad" in q or "inference_mode" in q):
                return GRAD_OFF
            if q is None and dotted(target) and any(w in (dotted(target) or "") for w in ("no_grad", "inference")):
                return GRAD_OFF
        if class_info is not None and fn.name.value in GRAD_METHODS:
            return GRAD_ON
        if class_info is not None and fn.name.value == "__init__":
            return GRAD_ON
        return GRAD_UNKNOWN


def _walk_statements(stmts):
    """Statements, recursing into compound statements (not into nested defs/classes)."""
    for stmt in stmts:
        yield stmt
        if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
            continue
        body = getattr(stmt, "body", None)
        if isinstance(body, cst.BaseSuite) and hasattr(body, "body"):
            yield from _walk_statements(body.body)
        orelse = getattr(stmt, "orelse", None)
        while orelse is not None:
            inner = getattr(orelse, "body", None)
            if isinstance(inner, cst.BaseSuite):
                yield from _walk_statements(inner.body)
                orelse = getattr(orelse, "orelse", None) if isinstance(orelse, cst.If) else None
            else:
                break
        for handler in getattr(stmt, "handlers", ()):
            yield from _walk_statements(handler.body.body)
        final = getattr(stmt, "finalbody", None)
        if final is not None:
            yield from _walk_statements(final.body.body)


class Scope:
    """One scope's interpretation: its environment, grad mode, path and loops."""

    def __init__(self, analysis: FileAnalysis, kind: str, grad: str, function: cst.FunctionDef | None = None,
                 class_info: ClassInfo | None = None):
        self.a = analysis
        self.facts = analysis.facts
        self.ops = analysis.ops
        self.kind = kind
        self.grad = grad
        self.function = function
        self.class_info = class_info
        self.env: dict[str, object] = {}
        self.self_attrs: dict[str, object] = {}
        self.params: set[str] = set()
        self.path: tuple = ()
        self.loops: list[tuple[cst.CSTNode, int]] = []  # (loop node, iteration)
        self.stmt: cst.CSTNode | None = None
        self.assigned_in_loop: dict[str, tuple[cst.CSTNode, cst.BaseExpression, cst.CSTNode]] = {}
        self.carries: list[Carry] = []
        self.pending_carries: dict[str, Carry] = {}
        self.saw_backward = False  # a function that runs backward runs in grad mode
        self.loop_backward = False  # backward() runs inside a loop of this scope
        self.created: list[Problem] = []
        self.unknown_grad_problems: list[Problem] = []  # leaf writes that hold only if the caller has grad on
        self.guarded = 0  # inside `if self.training:`-like arms: writes there prove nothing
        self.top: cst.CSTNode | None = None  # the top-level statement being run (locates blocks)
        self.inference: cst.Call | None = None  # inside `with torch.inference_mode():` (its call)

    # ---- helpers --------------------------------------------------------
    def _problem(self, problem: Problem, grad: str = GRAD_ON) -> None:
        if problem.top is None:
            problem.top = self.top
        self.created.append(problem)
        if grad == GRAD_UNKNOWN:
            self.unknown_grad_problems.append(problem)
            return
        self.facts.add_problem(problem)

    def settle_unknown_grad(self) -> None:
        """A function that calls backward() itself runs with grad enabled: its leaf writes are certain errors."""
        if self.saw_backward:
            for problem in self.unknown_grad_problems:
                self.facts.add_problem(problem)
        self.unknown_grad_problems = []

    def new_seq(self) -> int:
        return next(self.facts.seq)

    @property
    def iteration_key(self) -> tuple:
        return tuple(it for _, it in self.loops)

    def branch_path(self, node: cst.CSTNode, arm: int) -> tuple:
        return self.path + ((id(node), self.iteration_key, arm),)

    def new_tensor(self, *, requires_grad, is_leaf, origin, created_by, history=frozenset(), name="") -> Tensor:
        t = Tensor(Counter(), Storage(), requires_grad, is_leaf, origin=origin, created_by=created_by,
                   history=history, name=name)
        if self.inference is not None:
            t.inference_call = self.inference
            t.inference_top = self.top
        return t

    def record_name(self, node: cst.Name, value) -> None:
        if isinstance(value, Tensor):
            self.facts.name_values[id(node)] = value

    # ---- parameters -----------------------------------------------------
    def bind_parameters(self, fn: cst.FunctionDef) -> None:
        params = fn.params
        for p in list(params.posonly_params) + list(params.params) + list(params.kwonly_params):
            self.params.add(p.name.value)
        if self.class_info is not None and params.params and params.params[0].name.value == "self":
            self.params.discard("self")

    def lookup(self, name: str):
        if name in self.env:
            return self.env[name]
        return None

    def materialize_param(self, node: cst.Name) -> Tensor | None:
        """A function parameter used as a tensor operand: a tensor, requires_grad unknown."""
        name = node.value
        if name in self.params and name not in self.env:
            t = self.new_tensor(requires_grad=None, is_leaf=None, origin=node, created_by="a parameter of the function",
                                name=name)
            t.counter.known_start = False
            self.env[name] = t
            return t
        return None

    # ---- statements -----------------------------------------------------
    def run_body(self, stmts) -> None:
        for stmt in stmts:
            self.run_stmt(stmt)

    def run_stmt(self, stmt: cst.CSTNode) -> None:
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                self.stmt = stmt
                self.run_small(small, stmt)
        elif isinstance(stmt, (cst.For, cst.While)):
            self.run_loop(stmt)
        elif isinstance(stmt, cst.If):
            self.run_if(stmt)
        elif isinstance(stmt, cst.With):
            self.run_with(stmt)
        elif isinstance(stmt, cst.Try):
            self.run_try(stmt)
        elif isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
            name = stmt.name.value
            self.env[name] = None
        elif isinstance(stmt, cst.Match):
            for i, case in enumerate(stmt.cases):
                saved = self.path
                self.path = self.branch_path(stmt, i)
                self.run_body(case.body.body)
                self.path = saved

    def run_small(self, small: cst.BaseSmallStatement, stmt) -> None:
        if isinstance(small, cst.Assign):
            value = self.eval(small.value)
            for target in small.targets:
                self.assign(target.target, value, small.value, stmt)
        elif isinstance(small, cst.AnnAssign):
            if small.value is not None:
                value = self.eval(small.value)
                self.assign(small.target, value, small.value, stmt)
        elif isinstance(small, cst.AugAssign):
            self.run_augassign(small, stmt)
        elif isinstance(small, cst.Expr):
            value = self.eval(small.value)
            if isinstance(value, _ContextMarker) and isinstance(small.value, cst.Call):
                q = self.a.callee_qualname(small.value)
                if q in ("torch.set_grad_enabled", "torch.autograd.set_grad_enabled"):
                    self.grad = value.mode  # `torch.set_grad_enabled(False)` as a statement switches the mode
        elif isinstance(small, cst.Return):
            if small.value is not None:
                value = self.eval(small.value)
                self.escape(value, small)
        elif isinstance(small, cst.Del):
            for target in _names_in(small.target):
                self.env.pop(target, None)
        elif isinstance(small, (cst.Global, cst.Nonlocal)):
            for n in small.names:
                self.params.discard(n.name.value)

    def run_loop(self, stmt) -> None:
        if isinstance(stmt, cst.For):
            iterable = self.eval(stmt.iter)
        passes = self._loop_passes(stmt)
        saved_path = self.path
        for iteration in range(passes):
            self.loops.append((stmt, iteration))
            if iteration > 0:
                self._note_carries(stmt)
            if isinstance(stmt, cst.For):
                self.assign(stmt.target, self._element_of(iterable, stmt.iter), stmt.iter, stmt)
            else:
                self.eval(stmt.test)
            self.run_body(stmt.body.body)
            self.loops.pop()
        self.path = saved_path
        for name in list(self.assigned_in_loop):
            if self.assigned_in_loop[name][2] is stmt:
                del self.assigned_in_loop[name]
        if stmt.orelse is not None:
            self.run_body(stmt.orelse.body.body)

    def _loop_passes(self, stmt) -> int:
        depth = len(self.loops)
        if depth >= 2:
            return 1
        if depth == 1:
            return 2
        return 3

    def _note_carries(self, loop) -> None:
        self.pending_carries = {}
        for name, (assign_stmt, value_node, owner) in self.assigned_in_loop.items():
            if owner is not loop:
                continue
            value = self.env.get(name)
            history = frozenset().union(*(t.history for t in _flat_tensors([value])))
            if history:
                carry = Carry(name, assign_stmt, value_node, history, loop, value)
                self.carries.append(carry)
                self.pending_carries[name] = carry

    def _element_of(self, iterable, iter_node):
        if isinstance(iterable, ParamsOf):
            return self._parameter_tensor(iterable.module, iter_node)
        if isinstance(iterable, Seq):
            if iterable.items:
                return iterable.items[0]
            return iterable.element
        if isinstance(iterable, Tensor):
            # iterating a tensor unbinds it: the rows are multi-output views
            return self.view_of(iterable, iter_node, "multi")
        if isinstance(iterable, _RangeMarker):
            return Literal(0)
        return None

    def _parameter_tensor(self, module: Module, node) -> Tensor:
        t = Tensor(module.params_counter, module.params_storage, True, True, origin=node,
                   created_by=f"a parameter of `{module.name or module.kind}`", is_parameter=True,
                   module_params=module)
        return t

    def run_if(self, stmt: cst.If) -> None:
        self.eval(stmt.test)
        guard = _is_guard(stmt.test)
        saved = self.path
        if guard:
            self.guarded += 1
        self.path = self.branch_path(stmt, 0)
        self.run_body(stmt.body.body)
        arm = 1
        orelse = stmt.orelse
        while orelse is not None:
            self.path = self.branch_path(stmt, arm)
            if isinstance(orelse, cst.If):
                self.eval(orelse.test)
                self.run_body(orelse.body.body)
                orelse = orelse.orelse
                arm += 1
            else:
                self.run_body(orelse.body.body)
                orelse = None
        self.path = saved
        if guard:
            self.guarded -= 1

    def run_with(self, stmt: cst.With) -> None:
        saved = self.grad, self.inference
        for item in stmt.items:
            value = self.eval(item.item)
            if isinstance(value, _ContextMarker):
                self.grad = value.mode
                if value.inference_call is not None:
                    self.inference = value.inference_call
            elif item.asname is not None:
                self.assign(item.asname.name, None, item.item, stmt)
        self.run_body(stmt.body.body)
        self.grad, self.inference = saved

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
        if isinstance(target, cst.Name):
            self.env[target.value] = value
            self.pending_carries.pop(target.value, None)
            self.params.discard(target.value)
            self.record_name(target, value)
            if isinstance(value, (Tensor, Module)) and not value.name:
                value.name = target.value
            if self.loops:
                self.assigned_in_loop[target.value] = (stmt, value_node, self.loops[-1][0] if len(self.loops) == 1 else self.loops[0][0])
        elif isinstance(target, (cst.Tuple, cst.List)):
            elements = [e.value for e in target.elements]
            items = None
            if isinstance(value, Seq):
                items = value.items if value.items is not None else [value.element] * len(elements)
            for i, element in enumerate(elements):
                if isinstance(element, cst.StarredElement):
                    self.assign(element.value, None, value_node, stmt)
                    continue
                item = items[i] if items is not None and i < len(items) else None
                self.assign(element, item, value_node, stmt)
        elif isinstance(target, cst.Attribute):
            if isinstance(target.value, cst.Name) and target.value.value == "self":
                self.self_attrs[target.attr.value] = value
            else:
                base = self.eval(target.value)
                if isinstance(base, Tensor) and target.attr.value == "requires_grad":
                    if isinstance(value, Literal) and value.value is True and base.is_leaf:
                        base.requires_grad = True
        elif isinstance(target, cst.Subscript):
            base = self.eval(target.value)
            self.eval_slices(target)
            if isinstance(base, Tensor):
                self.write(base, target, stmt, op="[]=", kind="setitem", value=value)

    def run_augassign(self, small: cst.AugAssign, stmt) -> None:
        target_value = self.eval(small.target)
        value = self.eval(small.value)
        op = small.operator.__class__.__name__
        if isinstance(target_value, Tensor):
            symbol = _AUG_SYMBOLS.get(op, "op=")
            self.write(target_value, small, stmt, op=symbol, kind="augassign", value=value)
        else:
            # Python numbers, lists, unknowns: `a += b` rebinds a new value.
            result = None
            if isinstance(value, Tensor):
                result = self.new_tensor(requires_grad=value.requires_grad if self.grad != GRAD_OFF else False,
                                         is_leaf=not value.requires_grad if value.requires_grad is not None else None,
                                         origin=small, created_by="an augmented assignment", history=value.history)
            if isinstance(small.target, cst.Name):
                self.env[small.target.value] = result
                self.params.discard(small.target.value)

    # ---- writes ---------------------------------------------------------
    def write(self, t: Tensor, node, stmt, *, op: str, kind: str, value=None, module_ctor=None) -> Write:
        """Record an in-place write on `t` and the problems it proves."""
        w = Write(self.new_seq(), node, stmt, op, kind, 0, self.path, target_name=t.name, module_ctor=module_ctor,
                  top=self.top)
        if t.view_kind == "detach":
            w.via = "detach"
        elif t.view_of is not None:
            w.via = "view"
        grad = self.grad
        if self.guarded:
            grad = GRAD_UNKNOWN
        base = t.base
        if t.data_of is not None:
            # `x.data.add_()` writes x's storage without touching x's counter.
            w.via = "data"
            t.counter.write(w)
            t.storage.silent_writes.append(w)
            return w
        if t.overlapping and w.kind in ("method", "augassign") and w.op.rstrip("()") not in _FILL_LIKE:
            # checked on torch 2.13: arithmetic and random in-place ops refuse overlapping memory; scalar fills
            # (`fill_`, `zero_`, `masked_fill_`, ...) do not, and item assignment depends on the index
            w.raises = True
            self._problem(Problem("expand-write", w.node, w.stmt, tensor=t, write=w))
            t.counter.write(w)
            return w
        if base.inference_call is not None and self.inference is None and not self.guarded:
            w.raises = True
            self._problem(Problem("inference-write", w.node, w.stmt, tensor=base, write=w))
            t.counter.write(w)
            return w
        # Immediate errors, raised at the write itself.
        if grad != GRAD_OFF:
            self._check_immediate(t, base, w, grad, value)
        t.counter.write(w)
        # A tensor that receives a value requiring grad joins the graph.
        if isinstance(value, Tensor) and value.requires_grad and grad == GRAD_ON and not (t.is_leaf and t.requires_grad):
            for alias in (t, base):
                alias.requires_grad = True
                alias.is_leaf = False
                alias.history = alias.history | value.history
        elif isinstance(value, Tensor) and grad != GRAD_OFF:
            t.history = t.history | value.history
        return w

    def _check_immediate(self, t: Tensor, base: Tensor, w: Write, grad: str, value) -> None:
        leaf_rg = base.is_leaf is True and base.requires_grad is True
        if leaf_rg:
            local = base.origin is not None and not base.is_parameter and base.created_by.startswith("torch.")
            certain = GRAD_ON if (grad == GRAD_ON or local) else GRAD_UNKNOWN
            w.raises = certain == GRAD_ON
            if t is base and w.kind != "setitem":
                self._problem(Problem("leaf-write", w.node, w.stmt, tensor=base, write=w), certain)
            else:
                self._problem(Problem("leaf-view-write", w.node, w.stmt, tensor=base, write=w), certain)
            return
        if t.view_kind == "multi" and base.requires_grad is True and grad == GRAD_ON:
            w.raises = True
            self._problem(Problem("multi-view-write", w.node, w.stmt, tensor=t, write=w))
            return
        if t.view_in_no_grad and grad == GRAD_ON and base.requires_grad is True and not t.view_kind == "detach":
            w.raises = True
            self._problem(Problem("no-grad-view-write", w.node, w.stmt, tensor=t, write=w))

    # ---- saves and backward ---------------------------------------------
    def save(self, t: Tensor, op: str, node, what: str) -> Save:
        if t.inference_call is not None and self.inference is None and self.grad == GRAD_ON and not self.guarded:
            self._problem(Problem("inference-save", node, self.stmt, tensor=t, detail={"op": op}))
        s = Save(self.new_seq(), t.counter, t.storage, t.counter.version, op, node, self.stmt, self.path,
                 t.name, what, via_index=t.view_kind == "index",
                 loop=self.loops[-1][0] if self.loops else None,
                 iteration=self.loops[-1][1] if self.loops else 0, top=self.top,
                 expr=t.origin if not t.name else None, tensor=t)
        self.facts.saves.append(s)
        return s

    def finish(self) -> None:
        """Facts that fixes need about the whole scope."""
        for problem in self.created:
            problem.detail.setdefault("loop_backward", self.loop_backward)

    def backward(self, t: Tensor, node, retain: bool) -> None:
        self.saw_backward = True
        if self.loops:
            self.loop_backward = True
        self.check_history(t, node, kind="backward")
        for m in self._modules_in(t.history):
            m.grads = True
        if not retain:
            for s in t.history:
                if s.freed_by is None:
                    s.freed_by = node

    def _modules_in(self, history):
        seen = []
        for s in history:
            owner = s.counter.owner
            if owner is not None and owner not in seen:
                seen.append(owner)
        return seen

    def escape(self, value, node) -> None:
        """A value leaves the function: the caller will run backward on it."""
        if self.kind != "function":
            return
        values = value.items if isinstance(value, Seq) and value.items else [value]
        for v in values:
            if isinstance(v, Tensor) and v.requires_grad is True:
                self.check_history(v, node, kind="return")

    def check_history(self, t: Tensor, use, kind: str) -> None:
        for s in sorted(t.history, key=lambda s: s.seq):
            if s.freed_by is not None and kind == "backward":
                carry = self._carry_for(s)
                if carry is not None:
                    self._problem(Problem("freed-graph", carry.stmt, carry.stmt, tensor=t, save=s, use=use,
                                                   carry=carry.stmt, carry_target=carry.name,
                                                   carry_value=carry.value_node,
                                                   detail={"freed_by": s.freed_by, "carry": carry}))
                continue
            if s.counter.version != s.version:
                for w in s.counter.writes_since(s.version):
                    if not _compatible(s.path, w.path) or w.seq < s.seq:
                        continue
                    if w.via == "data" or w.raises:
                        continue
                    carries = self._carries_for(s) if w.kind == "step" else []
                    for carry in carries or [None]:
                        self._problem(Problem("stale-save", w.node, w.stmt, tensor=t, write=w, save=s, use=use,
                                              carry=carry.stmt if carry else None,
                                              carry_target=carry.name if carry else "",
                                              carry_value=carry.value_node if carry else None,
                                              detail={"carry": carry} if carry else {}))
                    break
            else:
                for w in s.storage.silent_writes:
                    if w.seq > s.seq and _compatible(s.path, w.path):
                        self._problem(Problem("silent-write", w.node, w.stmt, tensor=t, write=w, save=s,
                                                       use=use))
                        break

    def _carries_for(self, s: Save) -> list[Carry]:
        """Carried state through which the next iteration reaches the graph holding `s` (one per name)."""
        found: dict[str, Carry] = {}
        for carry in self.carries:
            if carry.used and s in carry.history and carry.name not in found:
                found[carry.name] = carry
        return list(found.values())

    def _carry_for(self, s: Save) -> Carry | None:
        carries = self._carries_for(s)
        return carries[0] if carries else None

    # ---- expressions ----------------------------------------------------
    def eval(self, node: cst.BaseExpression):
        method = getattr(self, "eval_" + type(node).__name__, None)
        if method is None:
            self.eval_children(node)
            return None
        value = method(node)
        if isinstance(value, Tensor):
            self.facts.expr_values[id(node)] = value
        return value

    def eval_children(self, node) -> None:
        for child in _children(node):
            if isinstance(child, cst.BaseExpression):
                if not isinstance(child, cst.Lambda):
                    self.eval(child)
            elif isinstance(child, _EXPRESSION_HOLDERS):
                self.eval_children(child)

    def eval_Name(self, node: cst.Name):
        if node.value in ("True", "False", "None"):
            return Literal({"True": True, "False": False, "None": None}[node.value])
        value = self.lookup(node.value)
        if value is None and node.value in self.params:
            return None
        carry = self.pending_carries.get(node.value)
        if carry is not None and carry.tensor is value and not carry.used:
            carry.used = True
            carry.use_node = node
            carry.use_top = self.top
        self.record_name(node, value)
        return value

    def eval_Integer(self, node):
        return Literal(int(node.value.replace("_", ""), 0) if node.value.isdigit() else 0)

    def eval_Float(self, node):
        return Literal(0.0)

    def eval_SimpleString(self, node):
        return Literal("")

    def eval_Tuple(self, node: cst.Tuple):
        return Seq([self.eval(e.value) for e in node.elements])

    def eval_List(self, node: cst.List):
        return Seq([self.eval(e.value) for e in node.elements])

    def eval_Attribute(self, node: cst.Attribute):
        attr = node.attr.value
        if isinstance(node.value, cst.Name) and node.value.value == "self" and self.class_info is not None:
            return self.self_attr(attr, node)
        q = self.a.resolve_dotted(node) if not self._bound_head(node) else None
        if q is not None:
            return None
        base = self.eval(node.value)
        if isinstance(base, Module) and base.has_params and attr in _PARAM_ATTRS:
            return Tensor(base.params_counter, base.params_storage, True, True, origin=node,
                          created_by=f"a parameter of `{base.name or base.kind}`", is_parameter=True,
                          module_params=base, name=f"{base.name}.{attr}" if base.name else attr)
        if isinstance(base, Tensor):
            if attr == "grad":
                base.grad_read = True
            if attr == "data":
                return Tensor(Counter(), base.storage, False, True, origin=node, created_by="`.data`",
                              data_of=base, name=f"{base.name}.data")
            if attr in ("T", "mT", "H", "mH", "real", "imag"):
                return self.view_of(base, node, "view")
            if attr in ("grad",):
                return self.new_tensor(requires_grad=False, is_leaf=True, origin=node, created_by="`.grad`")
        return None

    def _bound_head(self, node) -> bool:
        name = dotted(node)
        if name is None:
            return True
        return name.split(".")[0] in self.env or name.split(".")[0] in self.params

    def self_attr(self, attr: str, node):
        if attr in self.self_attrs:
            return self.self_attrs[attr]
        expr = self.class_info.attrs.get(attr) if self.class_info else None
        value = None
        self.self_attrs[attr] = None  # `self.x = f(self.x)` in __init__ must not recurse
        if isinstance(expr, cst.Call):
            q = self.a.callee_qualname(expr)
            if q == "torch.nn.Parameter":
                rg = _kwarg(expr, "requires_grad")
                if not (rg is not None and isinstance(rg.value, cst.Name) and rg.value.value == "False"):
                    value = Tensor(Counter(known_start=False), Storage(), True, True, origin=expr,
                                   created_by="nn.Parameter", name=f"self.{attr}", is_parameter=True)
            else:
                saved_stmt = self.stmt
                value = self.eval_module_ctor(expr, q) if q else None
                self.stmt = saved_stmt
                if isinstance(value, Module):
                    value.name = f"self.{attr}"
        self.self_attrs[attr] = value
        return value

    def eval_Subscript(self, node: cst.Subscript):
        base = self.eval(node.value)
        index_kind = self.eval_slices(node)
        if isinstance(base, Tensor):
            if index_kind == "basic":
                return self.view_of(base, node, "index")
            # advanced indexing copies; what it may alias we do not claim
            return self.new_tensor(requires_grad=base.requires_grad if self.grad != GRAD_OFF else False,
                                   is_leaf=None if base.requires_grad is None else not base.requires_grad,
                                   origin=node, created_by="indexing", history=base.history)
        if isinstance(base, ParamsOf):
            return self._parameter_tensor(base.module, node)
        if isinstance(base, Seq):
            if base.items is not None and len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index):
                idx = node.slice[0].slice.value
                if isinstance(idx, cst.Integer):
                    i = int(idx.value)
                    if -len(base.items) <= i < len(base.items):
                        return base.items[i]
            return None
        return None

    def eval_slices(self, node: cst.Subscript) -> str:
        """Evaluate the index expressions; 'basic' when every index is an int, slice, None or Ellipsis."""
        kind = "basic"
        for element in node.slice:
            sl = element.slice
            if isinstance(sl, cst.Slice):
                for part in (sl.lower, sl.upper, sl.step):
                    if part is not None:
                        self.eval(part)
                continue
            value = self.eval(sl.value)
            expr = sl.value
            if isinstance(expr, (cst.Integer, cst.Ellipsis)) or (isinstance(expr, cst.Name) and expr.value == "None"):
                continue
            if isinstance(value, Literal) and isinstance(value.value, int):
                continue
            if isinstance(expr, (cst.BinaryOperation, cst.UnaryOperation)) and _int_arith(expr, self):
                continue
            kind = "advanced" if isinstance(value, Tensor) else "unknown"
        return kind

    def eval_BinaryOperation(self, node: cst.BinaryOperation):
        left = self.eval(node.left)
        right = self.eval(node.right)
        if isinstance(left, Literal) and isinstance(right, Literal):
            if isinstance(left.value, int) and isinstance(right.value, int):
                return Literal(0)
            return None
        name = _BINOPS.get(type(node.operator).__name__)
        if name is None:
            return self._generic_result([left, right], node)
        if not (isinstance(left, Tensor) or isinstance(right, Tensor)):
            return None
        row = self.ops.by_name.get(name)
        args = [left, right]
        if row is not None and name == "Tensor.__pow__" and isinstance(right, Tensor):
            row = _POW_BOTH
        return self.apply_op(row, args, node, op_name=_OP_SYMBOL.get(name, name))

    def eval_UnaryOperation(self, node: cst.UnaryOperation):
        value = self.eval(node.expression)
        if isinstance(value, Tensor):
            return self._generic_result([value], node)
        if isinstance(value, Literal):
            return value
        return None

    def eval_Comparison(self, node):
        self.eval_children(node)
        return None

    def eval_BooleanOperation(self, node):
        self.eval(node.left)
        self.eval(node.right)
        return None

    def eval_IfExp(self, node: cst.IfExp):
        self.eval(node.test)
        saved = self.path
        self.path = self.branch_path(node, 0)
        a = self.eval(node.body)
        self.path = self.branch_path(node, 1)
        b = self.eval(node.orelse)
        self.path = saved
        return a if a is b else None

    def eval_Lambda(self, node):
        return None

    def eval_GeneratorExp(self, node):
        return None

    def eval_ListComp(self, node):
        return None

    def eval_SetComp(self, node):
        return None

    def eval_DictComp(self, node):
        return None

    def eval_Await(self, node):
        return self.eval(node.expression)

    def eval_NamedExpr(self, node: cst.NamedExpr):
        value = self.eval(node.value)
        self.assign(node.target, value, node.value, self.stmt)
        return value

    # ---- calls ----------------------------------------------------------
    def eval_Call(self, node: cst.Call):
        func = node.func
        q = None
        if not self._bound_head(func) or (isinstance(func, cst.Name) and func.value in self.a.classes
                                          and func.value not in self.env):
            q = self.a.resolve_dotted(func)
        if q is None and isinstance(func, cst.Name) and func.value in ("range", "enumerate", "zip", "len", "float",
                                                                       "int", "list", "iter", "reversed", "sum",
                                                                       "print", "isinstance", "getattr", "hasattr"):
            return self.eval_builtin(func.value, node)
        if q is not None:
            return self.eval_qualified_call(q, node)
        if (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == "self"
                and self.class_info is not None):
            callee = self.self_attr(func.attr.value, func)
            args = [self.eval(a.value) for a in node.args]
            return self.call_module(callee, args, node) if isinstance(callee, Module) else None
        if isinstance(func, cst.Attribute):
            receiver = self.eval(func.value)
            return self.eval_method(receiver, func.attr.value, node)
        callee = self.eval(func)
        args = [self.eval(a.value) for a in node.args]
        if isinstance(callee, Module):
            return self.call_module(callee, args, node)
        return None

    def eval_builtin(self, name: str, node: cst.Call):
        args = [self.eval(a.value) for a in node.args]
        if name == "range":
            return _RangeMarker()
        if name in ("list", "iter", "reversed") and args:
            return args[0]
        if name == "enumerate" and args:
            return Seq(None, Seq([Literal(0), self._element_of(args[0], node)]))
        if name == "zip":
            return Seq(None, Seq([self._element_of(a, node) for a in args]))
        if name in ("len", "int", "float"):
            return Literal(0)
        return None

    def args_of(self, node: cst.Call):
        positional = []
        keywords = {}
        for arg in node.args:
            value = self.eval(arg.value)
            if arg.keyword is not None:
                keywords[arg.keyword.value] = (value, arg.value)
            elif arg.star:
                positional.append(None)
            else:
                positional.append(value)
        return positional, keywords

    def eval_qualified_call(self, q: str, node: cst.Call):
        if q in GRAD_CONTEXTS:
            self.args_of(node)
            return _ContextMarker(GRAD_CONTEXTS[q], node if "inference_mode" in q else None)
        if q in ("torch.set_grad_enabled", "torch.autograd.set_grad_enabled"):
            positional, _ = self.args_of(node)
            if positional and isinstance(positional[0], Literal) and positional[0].value in (True, False):
                return _ContextMarker(GRAD_ON if positional[0].value else GRAD_OFF)
            return _ContextMarker(GRAD_UNKNOWN)
        if q in TENSOR_FACTORIES:
            return self.eval_factory(q, node)
        if q == "torch.nn.Parameter":
            self.args_of(node)
            rg = _kwarg(node, "requires_grad")
            if rg is not None and not (isinstance(rg.value, cst.Name) and rg.value.value == "True"):
                return None
            return Tensor(Counter(known_start=False), Storage(), True, True, origin=node, created_by="nn.Parameter",
                          is_parameter=True)
        if q in ("torch.autograd.backward",):
            positional, keywords = self.args_of(node)
            if positional and isinstance(positional[0], Tensor):
                self.backward(positional[0], node, _retain(keywords, node))
            return None
        if q == "torch.autograd.grad":
            positional, keywords = self.args_of(node)
            outputs = positional[0] if positional else None
            retain = _retain(keywords, node, default_kw="create_graph")
            for t in (outputs.items or []) if isinstance(outputs, Seq) else [outputs]:
                if isinstance(t, Tensor):
                    self.check_history(t, node, kind="backward")
                    if not retain:
                        for s in t.history:
                            if s.freed_by is None:
                                s.freed_by = node
            return None
        if q.startswith("torch.optim.") and q.rsplit(".", 1)[-1][:1].isupper() and "lr_scheduler" not in q:
            return self.eval_optimizer(q, node)
        if q == "torch.nn.Sequential":
            positional, _ = self.args_of(node)
            children = [c for c in positional if isinstance(c, Module)]
            known = len(children) == len(positional)
            has_params = True if any(c.has_params for c in children) else (False if known else None)
            m = self._new_module("torch.nn.Sequential", None, has_params, node)
            m.children = children if known else None
            for child in children:
                # `seq.parameters()` are the children's parameters: one counter stands for all of them
                child.params_counter = m.params_counter
                child.params_storage = m.params_storage
            m.saves_input = "params" if sum(1 for c in children if c.has_params) >= 2 else "single"
            return m
        if q in self.a.classes:
            self.args_of(node)
            info = self.a.classes[q]
            if not info.is_module:
                return None
            has_params = True if info.param_layers else (None if info.unknown_children else False)
            m = self._new_module(q, None, has_params, node)
            m.saves_input = "params" if info.param_layers + info.unknown_children >= 2 else "single"
            return m
        row = self.ops.by_name.get(q)
        if row is not None and row.kind == "module":
            return self.eval_module_ctor(node, q)
        if q.startswith("torch.nn.") and q.rsplit(".", 1)[-1][:1].isupper() and "functional" not in q:
            self.args_of(node)
            return self._new_module(q, None, None, node)
        positional, keywords = self.args_of(node)
        if row is not None:
            return self.apply_op(row, positional, node, keywords=keywords, op_name=q.rsplit(".", 1)[-1])
        if q.rsplit(".", 1)[-1] in NONDIFF:
            return self.new_tensor(requires_grad=False, is_leaf=True, origin=node, created_by=f"`{q}`")
        if q.startswith("torch.") and _flat_tensors(positional):
            out = keywords.get("out")
            if out is not None and isinstance(out[0], Tensor):
                return self.out_write(out[0], positional, node, q)
            inplace = keywords.get("inplace")
            if inplace is not None and isinstance(inplace[0], Literal) and inplace[0].value is True:
                first = positional[0]
                if isinstance(first, Tensor):
                    self.write(first, node, self.stmt, op=f"{q.rsplit('.', 1)[-1]}(inplace=True)", kind="inplace_arg")
                    return first
            return self._generic_result([p for p in positional if isinstance(p, Tensor)], node)
        return None

    def _new_module(self, kind, row, has_params, node) -> Module:
        m = Module(kind, row, has_params, Counter(label=f"parameters of {kind}", known_start=False), Storage(), ctor=node,
                   top=self.top)
        m.params_counter.owner = m
        return m

    def eval_module_ctor(self, node: cst.Call, q: str):
        row = self.ops.by_name.get(q)
        positional, keywords = self.args_of(node)
        if row is None or row.kind != "module":
            if q.startswith("torch.nn.") or q in self.a.classes:
                return self.eval_qualified_call(q, node)
            return None
        m = self._new_module(q, row, bool(row.params) or (False if row.params is False else None), node)
        m.saves_output = row.saves_output
        m.saves_input = row.saves_input
        inplace = keywords.get("inplace")
        pos = INPLACE_MODULE_ARG_POS.get(q)
        if inplace is not None:
            m.inplace = isinstance(inplace[0], Literal) and inplace[0].value is True
        elif pos is not None and len(positional) > pos:
            m.inplace = isinstance(positional[pos], Literal) and positional[pos].value is True
        return m

    def eval_factory(self, q: str, node: cst.Call):
        positional, keywords = self.args_of(node)
        rg = keywords.get("requires_grad")
        requires_grad: bool | None = False
        if rg is not None:
            requires_grad = rg[0].value if isinstance(rg[0], Literal) and isinstance(rg[0].value, bool) else None
        if q.endswith(("randint", "randperm", "randint_like")):
            requires_grad = False
        t = self.new_tensor(requires_grad=requires_grad, is_leaf=True, origin=node,
                            created_by=q + ("(..., requires_grad=True)" if requires_grad else "(...)"))
        if q.rsplit(".", 1)[-1] in ("rand", "randn", "zeros", "ones", "empty", "full"):
            t.shape = _literal_shape(positional[:1] if q.endswith("full") else positional)
        return t

    def eval_optimizer(self, q: str, node: cst.Call):
        positional, keywords = self.args_of(node)
        params = []
        first = positional[0] if positional else (keywords.get("params") or (None,))[0]
        self._collect_params(first, params)
        fused = keywords.get("fused")
        is_fused = fused is not None and isinstance(fused[0], Literal) and fused[0].value is True
        return Optimizer(params, is_fused, node=node)

    def _collect_params(self, value, out: list) -> None:
        if isinstance(value, ParamsOf):
            out.append(value.module)
        elif isinstance(value, Tensor) and value.is_leaf and value.requires_grad:
            out.append(value)
        elif isinstance(value, Seq):
            for item in value.items or ([value.element] if value.element is not None else []):
                self._collect_params(item, out)

    def out_write(self, out: Tensor, positional, node, q: str):
        name = q.rsplit(".", 1)[-1]
        w = self.write(out, node, self.stmt, op=f"{name}(out=...)", kind="out")
        needs_grad = any(t.requires_grad for t in _flat_tensors(positional)) or out.requires_grad
        if needs_grad and self.grad == GRAD_ON and not self.guarded:
            w.raises = True
            self._problem(Problem("out-grad", node, self.stmt, tensor=out, write=w, detail={"op": name}))
        return out

    def eval_method(self, receiver, name: str, node: cst.Call):
        if isinstance(receiver, Module):
            return self.eval_module_method(receiver, name, node)
        if isinstance(receiver, Optimizer):
            return self.eval_optimizer_method(receiver, name, node)
        if not isinstance(receiver, Tensor):
            if isinstance(node.func, cst.Attribute) and isinstance(node.func.value, cst.Name):
                param = self.materialize_param(node.func.value) if name in _TENSOR_ONLY_METHODS else None
                if param is not None:
                    receiver = param
            if not isinstance(receiver, Tensor):
                self.args_of(node)
                return None
        t = receiver
        if name == "backward":
            positional, keywords = self.args_of(node)
            self.backward(t, node, _retain(keywords, node, positional_index=1, positional=positional))
            return None
        if name == "detach":
            self.args_of(node)
            return self.view_of(t, node, "detach")
        if name == "detach_":
            self.args_of(node)
            t.history = frozenset()
            t.requires_grad = False
            t.is_leaf = True
            return t
        if name == "requires_grad_":
            positional, keywords = self.args_of(node)
            flag = positional[0] if positional else (keywords.get("requires_grad") or (Literal(True),))[0]
            if t.is_leaf is not False and isinstance(flag, Literal):
                t.requires_grad = bool(flag.value)
                t.is_leaf = True
                if flag.value:
                    t.created_by = (t.created_by or "a tensor") + " made to require grad with `requires_grad_()`"
            return t
        if name == "tolist":
            self.args_of(node)
            return Seq(None, Literal(0))
        if name in NON_TENSOR_METHODS:
            self.args_of(node)
            return Literal(0) if name in ("item", "dim", "numel") else None
        if name in FRESH_METHODS:
            self.args_of(node)
            return self.new_tensor(requires_grad=False, is_leaf=True, origin=node, created_by=f"`.{name}()`")
        if name == "clone":
            self.args_of(node)
            return self.new_tensor(requires_grad=t.requires_grad if self.grad != GRAD_OFF else False,
                                   is_leaf=(not t.requires_grad) if t.requires_grad is not None else None,
                                   origin=node, created_by="`.clone()`", history=t.history)
        if name in COPYISH_METHODS:
            self.args_of(node)
            return self.new_tensor(requires_grad=t.requires_grad if self.grad != GRAD_OFF else False,
                                   is_leaf=(not t.requires_grad) if t.requires_grad is not None else None,
                                   origin=node, created_by=f"`.{name}()`", history=t.history)
        row = self.ops.by_name.get("Tensor." + name)
        positional, keywords = self.args_of(node)
        if row is not None:
            if row.view in ("view", "expand", "multi", "alias"):
                if row.view == "multi":
                    return Seq(None, self.view_of(t, node, "multi"))
                view = self.view_of(t, node, row.view)
                view.shape = _view_shape(name, t.shape, positional)
                if row.view == "expand" and t.shape is not None and view.shape is not None:
                    # an expand that broadcasts a size-1 (or new) dimension makes elements share memory
                    padded = (1,) * (len(view.shape) - len(t.shape)) + t.shape
                    view.overlapping = any(old == 1 and new > 1 for old, new in zip(padded, view.shape))
                return view
            return self.apply_op(row, [t] + positional, node, keywords=keywords, op_name=name)
        if name in NONDIFF:
            return self.new_tensor(requires_grad=False, is_leaf=True, origin=node, created_by=f"`.{name}()`")
        if name.endswith("_") and not name.startswith("_") and name not in NOT_WRITES:
            value = next((p for p in positional if isinstance(p, Tensor)), None)
            self.write(t, node, self.stmt, op=f"{name}()", kind="method", value=value)
            base_row = self.ops.by_name.get("Tensor." + name[:-1])
            if base_row is not None and base_row.saves_output and self.grad != GRAD_OFF and t.requires_grad:
                s = self.save(t, name, node, "output")
                t.history = t.history | {s}
            return t
        if not name.startswith("_"):
            # A method the op table does not know: it saves nothing we can name, but its result stays in the graph.
            return self._generic_result([t] + _flat_tensors(positional), node)
        return None

    def eval_module_method(self, m: Module, name: str, node: cst.Call):
        self.args_of(node)
        if name == "parameters":
            return ParamsOf(m)
        if name == "zero_grad":
            if not _set_to_none_false(node):
                m.grads = False
            return None
        if name in ("to", "train", "eval", "cuda", "cpu", "float", "double", "half", "requires_grad_"):
            return m
        if name == "forward":
            return None
        return None

    def eval_optimizer_method(self, opt: Optimizer, name: str, node: cst.Call):
        self.args_of(node)
        if name == "zero_grad":
            if not _set_to_none_false(node):
                for p in opt.params:
                    if isinstance(p, Module):
                        p.grads = False
            return None
        if name == "step":
            opt_name = dotted(node.func.value) if isinstance(node.func, cst.Attribute) else ""
            for p in opt.params:
                if isinstance(p, Module):
                    if p.grads is False:
                        continue
                    w = Write(self.new_seq(), node, self.stmt, f"{opt_name}.step()", "step", 0, self.path,
                              target_name=f"the parameters of `{p.name or p.kind}`", optimizer_name=opt_name or "",
                              top=self.top)
                    if opt.fused:
                        p.params_storage.silent_writes.append(w)
                    else:
                        p.params_counter.write(w)
                elif isinstance(p, Tensor):
                    w = Write(self.new_seq(), node, self.stmt, f"{opt_name}.step()", "step", 0, self.path,
                              target_name=p.name, optimizer_name=opt_name or "", top=self.top)
                    if opt.fused:
                        p.storage.silent_writes.append(w)
                    else:
                        p.counter.write(w)
            return None
        return None

    def call_module(self, m: Module, args, node):
        tensors = _flat_tensors(args)
        if m.children is not None:
            value = args[0] if args else None
            for child in m.children:
                value = self.call_module(child, [value], node)
            return value
        grad_off = self.grad == GRAD_OFF
        if m.inplace and tensors:
            first = tensors[0]
            op = m.kind.rsplit(".", 1)[-1] + "(inplace=True)"
            self.write(first, node, self.stmt, op=op, kind="inplace_module", module_ctor=m.ctor)
            if m.saves_output and not grad_off and first.requires_grad:
                first.history = first.history | {self.save(first, op, node, "output")}
            return first
        any_rg = any(t.requires_grad is True for t in tensors)
        unknown_rg = any(t.requires_grad is None for t in tensors)
        if m.has_params is True:
            rg = True
        elif any_rg:
            rg = True
        elif m.has_params is None or unknown_rg:
            rg = None
        else:
            rg = False
        if grad_off:
            rg = False
        history = frozenset().union(*(t.history for t in tensors)) if tensors and not grad_off else frozenset()
        saves = set()
        if m.row is not None and m.row.view == "alias" and tensors:
            return tensors[0]
        if not grad_off:
            # Weights are saved for the input's gradient (Linear: when the input requires grad; conv and norms:
            # always); a model class of several layers saves the later layers' weights whatever its input.
            if m.has_params and (any_rg or m.saves_input in ("params", "all")):
                owner = m.params_counter.owner or m
                p = Tensor(m.params_counter, m.params_storage, True, True,
                           name=f"the parameters of `{owner.name or _short(owner.kind)}`", module_params=owner)
                saves.add(self.save(p, _short(m.kind), node, "parameters"))
            if tensors and m.saves_input in ("self", "all", "operands") and (m.has_params or any_rg):
                for i, t in enumerate(tensors[:1] if m.saves_input == "self" else tensors):
                    others_rg = m.has_params or any(o.requires_grad is True for j, o in enumerate(tensors) if j != i)
                    if m.saves_input == "operands" and not others_rg:
                        continue
                    saves.add(self.save(t, _short(m.kind), node, "input"))
        kind = m.kind
        if kind in ("torch.nn.RNN", "torch.nn.LSTM", "torch.nn.GRU"):
            out = self.new_tensor(requires_grad=rg, is_leaf=None if rg is None else not rg, origin=node,
                                  created_by=f"`{m.name or _short(kind)}(...)`", history=history | saves)
            def state():
                return self.new_tensor(requires_grad=rg, is_leaf=None if rg is None else not rg, origin=node,
                                       created_by=f"`{m.name or _short(kind)}(...)`", history=history | saves)
            hidden = Seq([state(), state()]) if kind == "torch.nn.LSTM" else state()
            return Seq([out, hidden])
        if kind == "torch.nn.LSTMCell":
            def cell_state():
                return self.new_tensor(requires_grad=rg, is_leaf=None if rg is None else not rg, origin=node,
                                       created_by=f"`{m.name or _short(kind)}(...)`", history=history | saves)
            return Seq([cell_state(), cell_state()])
        if m.row is None and m.kind not in self.a.classes and m.has_params is None:
            return None
        out = self.new_tensor(requires_grad=rg, is_leaf=None if rg is None else not rg, origin=node,
                              created_by=f"`{m.name or _short(kind)}(...)`", history=history | saves)
        if m.saves_output and rg:
            out.history = out.history | {self.save(out, _short(kind), node, "output")}
        return out

    # ---- ops ------------------------------------------------------------
    def view_of(self, t: Tensor, node, kind: str) -> Tensor:
        if kind == "detach":
            return Tensor(t.counter, t.storage, False, True, origin=node, created_by="`.detach()`",
                          view_of=t, view_kind="detach", name=f"{t.name}.detach()" if t.name else "")
        rg = t.requires_grad if self.grad != GRAD_OFF else False
        v = Tensor(t.counter, t.storage, rg, None if rg is None else not rg, origin=node,
                   created_by="a view" if kind != "index" else "indexing (a view)", history=t.history if rg else frozenset(),
                   view_of=t, view_kind=kind, view_in_no_grad=self.grad == GRAD_OFF)
        if t.view_kind == "multi":
            v.view_kind = "multi"
        v.inference_call, v.inference_top = t.inference_call, t.inference_top
        return v

    def _generic_result(self, tensors, node):
        tensors = [t for t in tensors if isinstance(t, Tensor)]
        if not tensors:
            return None
        if self.grad == GRAD_OFF:
            return self.new_tensor(requires_grad=False, is_leaf=True, origin=node, created_by="an op under no_grad")
        rg = True if any(t.requires_grad is True for t in tensors) else (None if any(t.requires_grad is None for t in tensors) else False)
        history = frozenset().union(*(t.history for t in tensors))
        return self.new_tensor(requires_grad=rg, is_leaf=None if rg is None else not rg, origin=node,
                               created_by="an op", history=history)

    def apply_op(self, row: OpRow | None, args, node, keywords=None, op_name: str = ""):
        keywords = keywords or {}
        for name in ("out",):
            out = keywords.get(name)
            if out is not None and isinstance(out[0], Tensor):
                return self.out_write(out[0], args, node, op_name)
        tensors = []
        for a in args:
            if isinstance(a, Tensor):
                tensors.append(a)
        if not tensors:
            # a function parameter used as an operand becomes a tensor of unknown requires_grad
            if isinstance(node, cst.Call):
                for arg in node.args:
                    if isinstance(arg.value, cst.Name):
                        p = self.materialize_param(arg.value)
                        if p is not None:
                            tensors.append(p)
            if not tensors:
                return None
        inplace = keywords.get("inplace")
        if inplace is not None and isinstance(inplace[0], Literal) and inplace[0].value is True:
            first = tensors[0]
            self.write(first, node, self.stmt, op=f"{op_name}(inplace=True)", kind="inplace_arg")
            if row is not None and row.saves_output and self.grad != GRAD_OFF and first.requires_grad:
                first.history = first.history | {self.save(first, op_name, node, "output")}
            return first
        if row is None:
            return self._generic_result(tensors, node)
        result = self._generic_result(tensors, node)
        if self.grad == GRAD_OFF:
            return result
        saves = set()
        if row.saves_input == "self":
            if tensors[0].requires_grad is True and args and args[0] is tensors[0]:
                saves.add(self.save(tensors[0], op_name, node, "input"))
        elif row.saves_input == "operands":
            for i, t in enumerate(tensors):
                if any(o.requires_grad is True for j, o in enumerate(tensors) if j != i):
                    saves.add(self.save(t, op_name, node, "input"))
        elif row.saves_input == "all":
            if any(t.requires_grad is True for t in tensors):
                for t in tensors:
                    saves.add(self.save(t, op_name, node, "input"))
        if saves:
            result.history = result.history | saves
        if row.saves_output and result.requires_grad is True:
            result.history = result.history | {self.save(result, op_name, node, "output")}
        result.created_by = f"`{op_name}`"
        return result



class _RangeMarker:
    pass


_POW_BOTH = OpRow("pow", "function", "all", True, "none", None, ())

_AUG_SYMBOLS = {
    "AddAssign": "+=", "SubtractAssign": "-=", "MultiplyAssign": "*=", "DivideAssign": "/=",
    "PowerAssign": "**=", "MatrixMultiplyAssign": "@=", "FloorDivideAssign": "//=", "ModuloAssign": "%=",
    "BitAndAssign": "&=", "BitOrAssign": "|=", "BitXorAssign": "^=", "LeftShiftAssign": "<<=",
    "RightShiftAssign": ">>=",
}
_BINOPS = {
    "Add": "Tensor.__add__", "Subtract": "Tensor.__sub__", "Multiply": "Tensor.__mul__",
    "Divide": "Tensor.__truediv__", "Power": "Tensor.__pow__", "MatrixMultiply": "Tensor.__matmul__",
}
_OP_SYMBOL = {"Tensor.__add__": "+", "Tensor.__sub__": "-", "Tensor.__mul__": "*", "Tensor.__truediv__": "/",
              "Tensor.__pow__": "**", "Tensor.__matmul__": "@"}
_TENSOR_ONLY_METHODS = {"add_", "mul_", "sub_", "div_", "zero_", "fill_", "copy_", "clamp_", "relu_", "sigmoid_",
                        "tanh_", "exp_", "sin", "exp", "sigmoid", "tanh", "relu", "matmul", "mm", "pow", "log", "mul"}


_PARAM_ATTRS = {"weight", "bias", "weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0", "weight_ih",
                "weight_hh", "bias_ih", "bias_hh", "in_proj_weight", "in_proj_bias"}


_FILL_LIKE = {"fill_", "zero_", "fill_diagonal_", "masked_fill_", "index_fill_"}


def _literal_shape(values) -> tuple[int, ...] | None:
    """A shape given as literal ints, `(2, 3)` or `2, 3`; None when any part is not a literal."""
    if len(values) == 1 and isinstance(values[0], Seq) and values[0].items is not None:
        values = values[0].items
    if not values or not all(isinstance(v, Literal) and isinstance(v.value, int) and v.value >= 0 for v in values):
        return None
    return tuple(v.value for v in values)


def _view_shape(method: str, shape, args) -> tuple[int, ...] | None:
    """The shape of a view when the code makes it plain (literal sizes); None otherwise."""
    if method == "unsqueeze" and shape is not None and len(args) == 1 and isinstance(args[0], Literal):
        dim = args[0].value
        if isinstance(dim, int) and -len(shape) - 1 <= dim <= len(shape):
            dim = dim if dim >= 0 else dim + len(shape) + 1
            return shape[:dim] + (1,) + shape[dim:]
        return None
    if method == "expand_as" and args and isinstance(args[0], Tensor):
        return args[0].shape
    if method == "expand":
        sizes = args[0].items if len(args) == 1 and isinstance(args[0], Seq) and args[0].items is not None else args
        if not sizes or not all(isinstance(v, Literal) and isinstance(v.value, int) for v in sizes):
            return None
        out = []
        pad = len(sizes) - len(shape) if shape is not None else 0
        for i, v in enumerate(sizes):
            if v.value == -1:
                if shape is None or i < pad:
                    return None
                out.append(shape[i - pad])
            else:
                out.append(v.value)
        return tuple(out)
    if method == "view":
        return _literal_shape(args)
    return None


def _flat_tensors(values) -> list:
    """Tensors among call arguments, including those inside tuples and lists."""
    out = []
    for v in values:
        if isinstance(v, Tensor):
            out.append(v)
        elif isinstance(v, Seq) and v.items is not None:
            out.extend(_flat_tensors(v.items))
    return out


def _short(kind: str) -> str:
    return kind.replace("torch.nn.", "nn.")


def _names_in(expr) -> list[str]:
    if isinstance(expr, cst.Name):
        return [expr.value]
    if isinstance(expr, (cst.Tuple, cst.List)):
        return [n for e in expr.elements for n in _names_in(e.value)]
    return []


def _kwarg(call: cst.Call, name: str) -> cst.Arg | None:
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == name:
            return arg
    return None


def _retain(keywords, node, default_kw: str | None = None, positional_index=None, positional=None) -> bool:
    """Whether backward keeps the graph: retain_graph=True (or an unknown value: we assume it may)."""
    value = keywords.get("retain_graph")
    if value is None and positional is not None and positional_index is not None and len(positional) > positional_index:
        value = (positional[positional_index], None)
    if value is None and default_kw:
        value = keywords.get(default_kw)
    if value is None:
        return False
    v = value[0]
    if isinstance(v, Literal):
        return bool(v.value)
    return True  # unknown: do not claim the graph was freed


def _set_to_none_false(node: cst.Call) -> bool:
    arg = _kwarg(node, "set_to_none")
    if arg is None and node.args and node.args[0].keyword is None:
        arg = node.args[0]
    return arg is not None and isinstance(arg.value, cst.Name) and arg.value.value == "False"


_EXPRESSION_HOLDERS = (cst.Arg, cst.Element, cst.DictElement, cst.StarredDictElement, cst.FormattedStringExpression,
                       cst.CompFor, cst.CompIf, cst.SubscriptElement, cst.Index, cst.Slice)


_FIELDS: dict[type, tuple[str, ...]] = {}


def _children(node):
    """A node's child nodes, read off its fields (libcst's `.children` rebuilds the node, which is slow)."""
    names = _FIELDS.get(type(node))
    if names is None:
        names = _FIELDS[type(node)] = tuple(
            f.name for f in dataclasses.fields(node)
            if f.name not in ("lpar", "rpar", "whitespace_before", "whitespace_after", "comma", "semicolon")
            and not f.name.startswith("whitespace"))
    for name in names:
        value = getattr(node, name)
        if isinstance(value, cst.CSTNode):
            yield value
        elif isinstance(value, (tuple, list)):
            for item in value:
                if isinstance(item, cst.CSTNode):
                    yield item


def _words(expr) -> list[str]:
    out = []
    stack = [expr]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.Name):
            out.append(node.value)
        elif isinstance(node, cst.SimpleString):
            out.append(node.value)
        elif isinstance(node, (cst.BaseExpression, *_EXPRESSION_HOLDERS, cst.Attribute)):
            stack.extend(c for c in _children(node) if isinstance(c, (cst.BaseExpression, *_EXPRESSION_HOLDERS)))
    return out


def _is_guard(test: cst.BaseExpression) -> bool:
    return any(word in w for w in _words(test) for word in GUARD_WORDS)


def _int_arith(expr, scope: Scope) -> bool:
    def walk(e):
        if isinstance(e, cst.Integer):
            return True
        if isinstance(e, cst.Name):
            v = scope.lookup(e.value)
            return isinstance(v, Literal) and isinstance(v.value, int)
        if isinstance(e, cst.BinaryOperation):
            return walk(e.left) and walk(e.right)
        if isinstance(e, cst.UnaryOperation):
            return walk(e.expression)
        return False

    return walk(expr)


def _compatible(p1: tuple, p2: tuple) -> bool:
    """Two events can happen in one run unless they sit in different arms of the same branch."""
    arms = {(node, it): arm for node, it, arm in p1}
    for node, it, arm in p2:
        other = arms.get((node, it))
        if other is not None and other != arm:
            return False
    return True
