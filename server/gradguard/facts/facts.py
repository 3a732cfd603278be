"""What the analysis proved about one file, and the per-name view of it that hover shows."""
from __future__ import annotations

import itertools
from dataclasses import dataclass, field

import libcst as cst

from .model import Problem, Save, Tensor


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
    # `train` when the name is met under `set_grad_enabled(train)` in passes of both grad modes, and per mode
    # ("on", "off") what it was then: (requires_grad, is_leaf, created_by)
    grad_flag: str = ""
    by_mode: dict = field(default_factory=dict)
    made_in_call: tuple | None = None  # (Span, created_by) inside the callee, when `created` is the caller's line


_DISAGREE = "disagree"  # passes over one name proved different values: hover claims neither


def _join_claims(old, new):
    if old is _DISAGREE or old == new:
        return old
    if old is None or new is None:
        return new if old is None else old  # a pass that knows nothing contradicts nothing
    return _DISAGREE


def _join_state(old: tuple | None, new: tuple) -> tuple:
    """(requires_grad, is_leaf) of one name over several passes."""
    return new if old is None else tuple(map(_join_claims, old, new))


def _short_code(code: str, limit: int = 60) -> str:
    code = " ".join(code.split())
    return code if len(code) <= limit else code[: limit - 1] + "…"


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
        # id(Name node) -> (requires_grad, is_leaf) when the name was met: a later requires_grad_(), an index write
        # of a graph value, change the Tensor itself; joined over passes (iterations, call contexts, blocks)
        self.name_states: dict[int, tuple] = {}
        # id(Name node) -> (flag, {grad mode: (requires_grad, is_leaf, created_by)}) for a name met inside
        # `with torch.set_grad_enabled(flag):`, per mode the passes ran it in (hover shows each arm)
        self.name_modes: dict[int, tuple] = {}
        # id(Tensor) -> (call node, its top) of the assignment that bound the tensor a call returned (`d_fake =
        # self.D(fake)`): hover's creation site is that line, the line inside the callee comes second
        self.returned_at: dict[int, tuple] = {}
        self.expr_values: dict[int, Tensor] = {}  # id(expression node) -> the Tensor it evaluated to
        # id(write node or statement) -> "`flag` is true": code that runs only when a bool parameter is not its default
        self.option_conditions: dict[int, str] = {}
        self.seq = itertools.count(1)
        self._seen_problems: set = set()
        self.saves: list[Save] = []
        self.locator = None  # set by the engine: finds nodes' spans
        self.imports: dict[str, str] = {}
        self.list_item_targets: set[int] = set()  # ids of `xs[i]` targets of `+=` whose `xs` is a Python list
        # (node, its top-level statement, what ran out) where a run's budget ran out: the code after it was not
        # checked in full, which the report must say (never a clean pass)
        self.budget_cuts: list[tuple] = []

    def merge(self, other: "Facts") -> None:
        """Add a block's cached facts to this file's."""
        for problem in other.problems:
            self.add_problem(problem)
        self.name_values.update(other.name_values)
        for key, state in other.name_states.items():
            self.name_states[key] = _join_state(self.name_states.get(key), state)
        self.returned_at.update(other.returned_at)
        for key, (flag, modes) in other.name_modes.items():
            for mode, state in modes.items():
                self._note_mode(key, flag, mode, state)
        self.expr_values.update(other.expr_values)
        self.saves.extend(other.saves)
        self.list_item_targets |= other.list_item_targets
        self.budget_cuts.extend(other.budget_cuts)

    def tensor_at(self, line: int, col: int) -> TensorFacts | None:
        """Facts about the tensor named at a 0-based (line, code-point column), if the analysis knows it."""
        if self.locator is None:
            return None
        for pb in self.locator.blocks:
            if not (pb.block.start_line <= line < pb.block.end_line):
                continue
            pb.span(pb.module)  # make sure positions are computed for this block
            for node, pos in pb.parsed.positions.items():
                if type(node) is not cst.Name or id(node) not in self.name_values:
                    continue
                start_line = pos.start.line - 1 + pb.block.start_line
                if start_line == line and pos.start.column <= col <= pos.end.column:
                    return self.describe(self.name_values[id(node)], node.value, hint_block=pb, node=node)
        return None

    def note_state(self, node: cst.Name, t: Tensor, flag: str = "", mode: str = "") -> None:
        """Remember what `t` was where `node` named it (what hover shows there, whatever happens to it later);
        under `set_grad_enabled(flag)`, also per grad mode."""
        self.name_states[id(node)] = _join_state(self.name_states.get(id(node)), (t.requires_grad, t.is_leaf))
        if flag:
            self._note_mode(id(node), flag, mode, (t.requires_grad, t.is_leaf, t.created_by))

    def _note_mode(self, key: int, flag: str, mode: str, state: tuple) -> None:
        modes = self.name_modes.setdefault(key, (flag, {}))[1]
        old = modes.get(mode)
        modes[mode] = state if old is None else (*_join_state(old[:2], state[:2]), old[2] or state[2])

    def describe(self, t: Tensor, name: str, hint_block=None, node: cst.Name | None = None) -> TensorFacts:
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
        requires_grad, is_leaf = (None if c is _DISAGREE else c
                                  for c in self.name_states.get(id(node), (t.requires_grad, t.is_leaf)))
        flag, modes = self.name_modes.get(id(node), ("", {}))
        # both arms of `set_grad_enabled(flag)` ran this name: hover says it depends on the flag, and what each arm
        # made (never the no_grad arm's "made under no_grad" alone for a tensor the other arm puts in the graph)
        by_mode = {mode: tuple(None if c is _DISAGREE else c for c in modes[mode][:2]) + modes[mode][2:]
                   for mode in ("on", "off") if mode in modes}
        created = t.created_by
        if len(by_mode) == 2:
            created = by_mode["on"][2] or created
        else:
            flag, by_mode = "", {}
        site, made = span(t.origin), None
        returned = self.returned_at.get(id(t))
        if returned is not None and loc is not None:
            call_span = span(*returned)
            block = getattr(hint_block, "block", None)
            here = block is None or block.start_line <= (call_span.start_line if call_span else -1) < block.end_line
            if here and call_span is not None and site is not None and call_span.start_line != site.start_line:
                # where the callee made it, shown after the caller's line (with what made it there, unless only
                # the no_grad arm's "op under no_grad" is known of it)
                made = (site, "" if by_mode and t.created_by == "an op under no_grad" else t.created_by)
                site, created = call_span, f"`{_short_code(loc.code(returned[0]))}`"
        return TensorFacts(name, is_leaf, requires_grad, site, created,
                           _first_per_span(saves), _first_per_span(writes), t.is_parameter, shares,
                           f"`{t.data_of.name}`" if t.data_of is not None else "", grad_flag=flag, by_mode=by_mode,
                           made_in_call=made)

    def add_problem(self, problem: Problem) -> None:
        if problem.top is None and problem.write is not None:
            problem.top = problem.write.top
        key = self._key(problem)
        if key in self._seen_problems:
            # the same problem met in several contexts (a helper run from two callers, or on its own): the one
            # that knows the call where it goes wrong wins, whatever order the contexts ran in
            if problem.detail.get("site") is not None:
                for i, old in enumerate(self.problems):
                    if self._key(old) == key and old.detail.get("site") is None:
                        self.problems[i] = problem
                        break
            return
        self._seen_problems.add(key)
        self.problems.append(problem)

    @staticmethod
    def _key(problem: Problem) -> tuple:
        return (problem.kind, id(problem.node), id(problem.save.node) if problem.save else None, id(problem.carry))
