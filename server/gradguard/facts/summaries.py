"""Function summaries: what running a same-file constructor, or a same-file function called with plain arguments,
did, keyed by the function and its call context, and replayed instead of re-running it when the context repeats.

A model class's `__init__` builds the same structure for every instance built with the same arguments: a stage of
twelve identical blocks ran the block's `__init__` (and every nested one) twelve times. The store records the first
run's result as a template and gives every later instance a copy with objects of its own (modules, parameters,
version counters, containers), so the other eleven cost a copy each.

Only where replaying is exactly what running would do (findings and the budget stay identical):
- the arguments are plain values (literals, classes, functions, tuples of those, unknowns): nothing the caller
  holds can be reached, changed or shared by the instance;
- the run read no mutable value from outside (module-level models, tensors, lists) and every module-level name it
  read is bound to the same value when the summary is reused;
- the run recorded no event: no problem, save, write, backward, carried state or option condition; and it stayed
  inside the interpretation budget, which a reuse is charged the same steps and calls of (so every later budget
  decision is the one the full run would have made);
- everything reachable from the instance is a value the copy can make faithfully (see `_Copier`).
A plain call (`call_key`, `run_call`, `replay_call`) is held to the same conditions; its result is what is copied.
The call context in the key: the function, the arguments, grad and inference mode, the guard and option arms, the
call depth and stack, the enclosing loops, whether the run reports. Branch paths and loop iterations recorded in the
instance (where a container was built) are re-based onto the new call's path.
"""
from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from .model import (
    _ids,
    ClassRef,
    Counter,
    DictVal,
    FunctionRef,
    Instance,
    Literal,
    Module,
    Number,
    ParamsOf,
    Partial,
    QualRef,
    Seq,
    Storage,
    Tensor,
)
from .sets import EMPTY


# What a module-level name read as unbound (a def or class not yet run as a statement) is recorded as.
UNBOUND = type("Unbound", (), {"__repr__": lambda self: "UNBOUND", "__slots__": ()})()


class _NotSummarisable(Exception):
    """The run (or a value it made) cannot be replayed faithfully."""


@dataclass(eq=False)
class ConstructorSummary:
    """What one run of a constructor did in its context: the instance it built (a private template), the budget it
    spent, the module-level names it read, the blocks it touched and its assignments inside enclosing loops."""

    template: Module
    base_path: tuple
    base_iterations: tuple
    steps: int
    calls: int
    global_reads: tuple  # ((env, name, value), ...) identical when reused
    deps: tuple  # block modules the run touched (cached block Facts depend on them)
    loop_assignments: tuple  # ((template object, attr, entry without its object), ...) for RunState.assigned_in_loop
    # (Facts dict, id(node), template tensor): what hover shows at the constructor's names and expressions is the
    # latest instance's tensor, as when every instance ran
    shown: tuple


class _Recording:
    """What the store watches while one constructor runs."""

    __slots__ = ("global_reads", "loop_assignments", "refused", "enclosing_envs")

    def __init__(self, enclosing_envs: frozenset = frozenset()):
        self.global_reads: list = []
        self.loop_assignments: list = []  # ((id(obj), attr), obj)
        self.refused = False
        # ids of the environments a recorded closure reads through its own enclosing scopes (its key holds them)
        self.enclosing_envs = enclosing_envs


class SummaryStore:
    """Summaries of one analysis run (a block's or the module code's), with what the interpreter tells it while a
    constructor runs: external reads (`note_external_read`) and assignments inside loops (`note_loop_assignment`)."""

    summarise_calls = True  # plain calls of functions too (off: every call runs; tests compare the two)

    def __init__(self):
        self._summaries: dict = {}  # call context -> ConstructorSummary
        self._recordings: list[_Recording] = []
        self.hits = 0
        self.runs = 0

    @property
    def recording(self) -> bool:
        return bool(self._recordings)

    # ---- what the interpreter reports while a run is recorded -------------
    def note_external_read(self, env, name: str, value, enclosing: bool = False) -> None:
        """A name read from the module-level environment (or, `enclosing`, from a function the callee closes over)."""
        mutable = _is_mutable(value)
        for rec in self._recordings:
            if mutable or enclosing and id(env) not in rec.enclosing_envs:
                rec.refused = True
            else:
                rec.global_reads.append((env, name, value))

    def note_external_write(self) -> None:
        for rec in self._recordings:
            rec.refused = True

    def note_loop_assignment(self, key, obj) -> None:
        if obj is None:
            return  # a local of the constructor's own scope: inert once the run ends
        for rec in self._recordings:
            rec.loop_assignments.append((key, obj))

    # ---- constructors -------------------------------------------------------
    def key(self, scope, init: cst.FunctionDef, info, positional, keywords):
        """The call context of `info(...)` running `init`, or None when the arguments are not plain values."""
        arguments = _arguments(positional, keywords)
        return None if arguments is None else (id(init), id(info), *arguments, *_context(scope))

    def replay(self, scope, key, node):
        """A copy of the summarised instance for this call, or None when there is no usable summary."""
        summary = self._summaries.get(key)
        copied = self._copy(scope, summary, keep_dtype=False) if summary is not None else None
        if copied is None:
            return None
        copier, obj = copied
        obj.ctor, obj.top = node, scope.top
        if obj.inference_call is not None:
            obj.inference_top = scope.top
        self._charge(scope, summary, copier)
        assigned = scope.run.assigned_in_loop
        for template_obj, attr, entry in summary.loop_assignments:
            copy = copier.memo[id(template_obj)]
            assigned[(id(copy), attr)] = entry + (copy,)
            self.note_loop_assignment((id(copy), attr), copy)
        return obj

    def run(self, scope, key, node, build):
        """Run `build()` (the constructor) and record its summary when the run allows it."""
        obj, rec, start = self._record(scope, build, frozenset())
        if not self._clean(scope, rec, start) or type(obj) is not Module or obj.ctor is not node:
            self._refuse_outer()
            return obj
        run = scope.run
        copier = _Copier(scope.path, _iterations(scope), scope.path, _iterations(scope))
        try:
            template = copier.value(obj)
            loop_assignments = []
            for entry_key, owner in rec.loop_assignments:
                entry = run.assigned_in_loop.get(entry_key)
                if entry is None or entry[5] is not owner:
                    continue  # pruned when a loop of the constructor ended
                if id(owner) not in copier.memo:
                    raise _NotSummarisable
                loop_assignments.append((copier.memo[id(owner)], entry_key[1], entry[:5]))
        except _NotSummarisable:
            self._refuse_outer()
            return obj
        self._summaries[key] = ConstructorSummary(
            template, scope.path, _iterations(scope), *self._spent(scope, rec, start), tuple(loop_assignments),
            _shown(scope.facts, copier.memo))
        return obj

    # ---- plain calls of this file's functions -------------------------------
    def call_key(self, scope, fn, positional, keywords):
        """The call context of a same-file function (not a method) called with plain values, or None."""
        for v in positional:  # the common refusal without raising (a training step's model, batch, optimizer)
            if type(v) in _HOLDERS:
                return None
        arguments = _arguments(positional, keywords)
        # the closure's scope is in the key and pinned by the summary (`CallSummary.enclosing`), so its id is not
        # reused; so are default-dtype and autocast changes, which decide the proven dtypes a copy keeps
        return None if arguments is None else ("call", id(fn.node), id(fn.enclosing), *arguments, *_context(scope),
                                               scope.run.defaults_changed, scope.run.autocast_seen)

    def replay_call(self, scope, key):
        """(True, a copy of the summarised call's result) or (False, None) when there is no usable summary."""
        summary = self._summaries.get(key)
        copied = self._copy(scope, summary, keep_dtype=True) if summary is not None else None
        if copied is None:
            return False, None
        self._charge(scope, summary, copied[0])
        return True, copied[1]

    def run_call(self, scope, key, fn, call):
        """Run `call()` (the function's body) and record its summary when the run allows it: the run recorded no
        event and changed nothing outside it, and its result is a value a copy makes faithfully."""
        envs, enclosing = set(), fn.enclosing
        while enclosing is not None and enclosing.kind != "module":
            envs.add(id(enclosing.env))
            enclosing = enclosing.enclosing
        result, rec, start = self._record(scope, call, frozenset(envs))
        if not self._clean(scope, rec, start) or rec.loop_assignments:
            self._refuse_outer()
            return result
        copier = _Copier(scope.path, _iterations(scope), scope.path, _iterations(scope), keep_dtype=True)
        try:
            template = copier.value(result)
        except _NotSummarisable:
            self._refuse_outer()
            return result
        self._summaries[key] = CallSummary(template, scope.path, _iterations(scope), *self._spent(scope, rec, start),
                                           _shown(scope.facts, copier.memo), fn.enclosing)
        return result

    # ---- what both kinds share ----------------------------------------------
    def _record(self, scope, run, enclosing_envs: frozenset):
        """Run `run()` while recording what it reads: (its result, the recording, the state it started from)."""
        a = scope.a
        start = (_events(scope.facts, scope.run), a.steps, a.calls, set(a.deps) if a.deps is not None else None)
        rec = _Recording(enclosing_envs)
        self._recordings.append(rec)
        try:
            result = run()
        finally:
            self._recordings.pop()
        self.runs += 1
        return result, rec, start

    def _clean(self, scope, rec, start) -> bool:
        """The recorded run may be replayed: it read nothing it must not, recorded no event, stayed in the budget."""
        a = scope.a
        return not rec.refused and start[0] == _events(scope.facts, scope.run) \
            and a.steps <= a.max_steps // 2 and a.calls < a.max_calls

    def _spent(self, scope, rec, start) -> tuple:
        """(steps, calls, outside reads, blocks touched) of a recorded run."""
        a = scope.a
        _, steps, calls, deps = start
        return (a.steps - steps, a.calls - calls, tuple(rec.global_reads),
                tuple(a.deps - deps) if deps is not None else ())

    def _copy(self, scope, summary, keep_dtype: bool):
        """(copier, copy of the template) when replaying `summary` here is what running would do, else None."""
        a = scope.a
        if a.steps + summary.steps > a.max_steps // 2 or a.calls + summary.calls >= a.max_calls:
            return None  # the full run would meet the budget: let it
        for env, name, value in summary.global_reads:
            if env.get(name, UNBOUND) is not value:
                return None
        copier = _Copier(summary.base_path, summary.base_iterations, scope.path, _iterations(scope), keep_dtype)
        try:
            return copier, copier.value(summary.template)
        except _NotSummarisable:
            return None

    def _charge(self, scope, summary, copier) -> None:
        """A replay costs the budget the run cost, reads what it read, and shows hover its copies."""
        a = scope.a
        a.steps += summary.steps
        a.calls += summary.calls
        if a.deps is not None:
            a.deps.update(summary.deps)
        for rec in self._recordings:
            rec.global_reads.extend(summary.global_reads)
        for values, node_id, template_value in summary.shown:
            getattr(scope.facts, values)[node_id] = copier.memo[id(template_value)]
        self.hits += 1

    def _refuse_outer(self) -> None:
        """A run that cannot be summarised makes the runs holding it unsummarisable too (its effects are theirs)."""
        for rec in self._recordings:
            rec.refused = True


@dataclass(eq=False)
class CallSummary:
    """What one call of a same-file function with plain arguments did: its result (a private template), the budget
    it spent, the names it read from outside, the blocks it touched, what hover shows of its result."""

    template: object
    base_path: tuple
    base_iterations: tuple
    steps: int
    calls: int
    global_reads: tuple
    deps: tuple
    shown: tuple
    enclosing: object  # the closure's scope, kept alive while its id is part of the key


def _events(facts, run) -> tuple:
    """Everything a run can record that a replay would not: findings' problems, saves, option conditions, carried
    state, backward, default dtype or device changes."""
    return (len(facts.problems), len(facts.saves), len(facts.option_conditions), len(facts.list_item_targets),
            len(run.created), len(run.unknown_grad_problems), len(run.carries), len(run.pending), run.saw_backward,
            run.loop_backward, run.defaults_changed, run.autocast_seen)


def _arguments(positional, keywords) -> tuple | None:
    """(positional keys, sorted keyword keys) of plain arguments; None when one is not plain."""
    try:
        return (tuple(_plain_key(v) for v in positional),
                tuple(sorted((name, _plain_key(v[0] if isinstance(v, tuple) else v)) for name, v in keywords.items())))
    except _NotSummarisable:
        return None


def _context(scope) -> tuple:
    """The call context a summary is keyed by besides the function and its arguments."""
    return (scope.grad, id(scope.inference), scope.guarded, scope.option_condition, scope.depth,
            tuple(map(id, scope.stack)), tuple(id(f.node) for f in scope.loops), len(scope.path), scope.a.silent,
            id(scope.globals_scope))


def _shown(facts, memo) -> tuple:
    """What hover shows of the copied values: (Facts dict, id(node), template value)."""
    return tuple((values, node_id, memo[id(v)]) for values in ("name_values", "expr_values")
                 for node_id, v in getattr(facts, values).items() if id(v) in memo)


def _iterations(scope) -> tuple:
    return tuple(f.iteration for f in scope.loops)


_IMMUTABLE = (Literal, Number, QualRef, ClassRef, str, int, float, bool, type(None), type(UNBOUND))


_HOLDERS = (Tensor, Module, Instance, DictVal, ParamsOf)  # values a plain key never takes


def _is_mutable(value) -> bool:
    if isinstance(value, _IMMUTABLE):
        return False
    if type(value) is FunctionRef:
        return value.enclosing is not None or value.bound is not None
    return True


def _plain_key(value):
    """A hashable stand-in for an argument that cannot hold anything mutable; raises for other values."""
    if value is None:
        return ("unknown",)
    t = type(value)
    if isinstance(value, Literal):  # OptionDefault too: its parameter name is part of it
        return (t.__name__, type(value.value).__name__, value.value, getattr(value, "param", ""))
    if t is Number:
        return ("number", value.is_int)
    if t is QualRef:
        return ("qual", value.name)
    if t is ClassRef:
        return ("class", id(value.info))
    if t is FunctionRef and value.enclosing is None and value.bound is None:
        return ("function", id(value.node), id(value.cls), value.kind)
    if t is Seq and not value.is_list and value.items is not None and not value.spread and not value.module_walk:
        return ("tuple", tuple(_plain_key(v) for v in value.items), value.path)
    if t is Partial:
        return ("partial", _plain_key(value.func), tuple(_plain_key(v) for v in value.args),
                tuple(sorted((k, _plain_key(v[0] if type(v) is tuple else v)) for k, v in value.kwargs.items())))
    raise _NotSummarisable


class _Copier:
    """Copies an instance graph with objects of its own (new counters and storages: parameters of its own), branch
    paths re-based from the recorded call's path and loop iterations onto the new call's. Refuses what it cannot
    copy faithfully: recorded events (writes, saves, graph owners), closures, optimizers, library objects."""

    def __init__(self, old_path: tuple, old_iterations: tuple, new_path: tuple, new_iterations: tuple,
                 keep_dtype: bool = False, writes: bool = False):
        self.memo: dict = {}
        # copy the writes a counter or storage recorded (a method's instance made from a build whose `__init__`
        # ran `trunc_normal_(self.pos_embed)`): the copy is the state right after that build, written as it was
        self.writes = writes
        self.keep_dtype = keep_dtype  # the key holds whether defaults or autocast changed: proven dtypes stand
        self.old_path, self.new_path = old_path, new_path
        self.old_iterations, self.new_iterations = old_iterations, new_iterations

    def path(self, path: tuple) -> tuple:
        if not path or self.old_path == self.new_path and self.old_iterations == self.new_iterations:
            return path  # () is no path at all (a value made outside any branch bookkeeping): the same anywhere
        n = len(self.old_path)
        if path[:n] != self.old_path:
            raise _NotSummarisable
        k = len(self.old_iterations)
        out = list(self.new_path)
        for node_id, iterations, arm in path[n:]:
            if iterations[:k] != self.old_iterations:
                raise _NotSummarisable
            out.append((node_id, self.new_iterations + iterations[k:], arm))
        return tuple(out)

    def value(self, v):
        if isinstance(v, _IMMUTABLE) or isinstance(v, cst.CSTNode):
            return v
        done = self.memo.get(id(v))
        if done is not None:
            return done
        t = type(v)
        if t is Module:
            return self._module(v)
        if t is Tensor:
            return self._tensor(v)
        if t is Seq:
            out = Seq(None, None, self.path(v.path), v.is_list, [], v.module_walk)
            self.memo[id(v)] = out
            out.items = [self.value(i) for i in v.items] if v.items is not None else None
            out.element = self.value(v.element)
            out.spread = [self.value(i) for i in v.spread]
            return out
        if t is DictVal:
            out = DictVal(None)
            self.memo[id(v)] = out
            out.items = {k: self.value(i) for k, i in v.items.items()} if v.items is not None else None
            return out
        if t is Instance:
            out = Instance(v.cls, {}, v.name)
            self.memo[id(v)] = out
            out.attrs = {k: self.value(i) for k, i in v.attrs.items()}
            return out
        if t is ParamsOf:
            out = ParamsOf(None)
            self.memo[id(v)] = out
            out.module = self.value(v.module)
            return out
        if t is FunctionRef and v.enclosing is None:
            out = FunctionRef(v.node, v.top, None, v.cls, None, v.kind)
            self.memo[id(v)] = out
            out.bound = self.value(v.bound)
            return out
        if t is Partial:
            out = Partial(None, [], {})
            self.memo[id(v)] = out
            out.func = self.value(v.func)
            out.args = [self.value(i) for i in v.args]
            out.kwargs = {k: self.value(i) for k, i in v.kwargs.items()}
            return out
        if type(v) is tuple:
            return tuple(self.value(i) for i in v)
        raise _NotSummarisable  # an optimizer, a library object, a closure: not copied

    def counter(self, c: Counter) -> Counter:
        done = self.memo.get(id(c))
        if done is not None:
            return done
        if (c.writes or c.version) and not self.writes:
            raise _NotSummarisable
        out = Counter(next(_ids), c.version, list(c.writes), c.label, c.known_start, None)
        self.memo[id(c)] = out
        out.owner = self.value(c.owner)
        return out

    def storage(self, s: Storage) -> Storage:
        done = self.memo.get(id(s))
        if done is not None:
            return done
        if s.silent_writes and not self.writes:
            raise _NotSummarisable
        out = Storage(next(_ids), list(s.silent_writes))
        self.memo[id(s)] = out
        return out

    def _module(self, m: Module) -> Module:
        out = Module.__new__(Module)
        out.__dict__.update(m.__dict__)
        self.memo[id(m)] = out
        out.params_counter = self.counter(m.params_counter)
        out.params_storage = self.storage(m.params_storage)
        out.children = [self.value(c) for c in m.children] if m.children is not None else None
        out.attrs = {k: self.value(i) for k, i in m.attrs.items()}
        out.keys = list(m.keys) if m.keys is not None else None
        out.parent = self.value(m.parent)
        out.children_path = self.path(m.children_path)
        out.backward_hook_path = self.path(m.backward_hook_path)
        out.eval_path = self.path(m.eval_path) if m.eval_path is not None else None
        out.forward_pre_hooks = [[self.value(hook), self.path(path)] for hook, path in m.forward_pre_hooks]
        out.forward_hooks = [[self.value(hook), self.path(path)] for hook, path in m.forward_hooks]
        if out.inplace_site is not None and type(out.inplace_site) is not tuple:
            raise _NotSummarisable
        extra = set(m.__dict__) - _MODULE_FIELDS
        if extra:
            raise _NotSummarisable  # an attribute this copier does not know (set by another part): not guessed
        return out

    def _tensor(self, t: Tensor) -> Tensor:
        if t.history is not EMPTY and t.history or t.owners is not EMPTY and t.owners:
            raise _NotSummarisable  # a graph or parameter owners: events of the run, not copied
        out = Tensor.__new__(Tensor)
        out.__dict__.update(t.__dict__)
        self.memo[id(t)] = out
        out.id = next(_ids)
        out.counter = self.counter(t.counter)
        out.storage = self.storage(t.storage)
        out.view_of = self.value(t.view_of)
        out.data_of = self.value(t.data_of)
        out.module_params = self.value(t.module_params)
        # a proven dtype/device depends on what ran before this construction (torch.set_default_dtype): not replayed
        if not self.keep_dtype:
            out.dtype = out.device = ""
        extra = set(t.__dict__) - _TENSOR_FIELDS
        if extra:
            raise _NotSummarisable
        return out


_MODULE_FIELDS = set(Module.__dataclass_fields__)
_TENSOR_FIELDS = set(Tensor.__dataclass_fields__)
