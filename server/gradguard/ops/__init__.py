"""The op table: which torch ops save their inputs or output for backward, and which return views.

The data is `op_table.csv` beside this file, generated from torch by `scripts/gen_op_table.py`
(column meanings are in its header comment). This module only reads it: it must not import torch.
"""
from __future__ import annotations

import csv
import functools
import io
from dataclasses import dataclass
from importlib import resources

SAVES_INPUT = ("none", "self", "operands", "all")
VIEWS = ("none", "view", "multi", "expand", "alias")
KINDS = ("function", "module", "inplace")
OUTPUTS = ("saved", "free", "nograd")


@dataclass(frozen=True)
class OpRow:
    """One row of the table; `names` are the qualified names it covers (`torch.sin`, `Tensor.sin`)."""

    op: str
    kind: str  # "function" | "module"
    saves_input: str  # "none" | "self" | "operands" | "all"
    saves_output: bool
    view: str  # "none" | "view" | "multi" | "expand" | "alias"
    params: bool | None  # modules: are the parameters saved by forward; None for functions
    names: tuple[str, ...]
    has_params: bool | None = None  # modules: does it hold parameters at all (nn.Embedding does, saves none)
    # What torch prints after "which is output 0 of" (one entry per name, "-" for nothing printed): for a
    # tensor this op made, for a tensor its in-place form wrote, for a stale saved parameter of the module.
    output_of: tuple[str, ...] = ()
    inplace_output_of: tuple[str, ...] = ()
    params_output_of: tuple[str, ...] = ()
    # Ops returning a tuple of tensors (eigh, qr, svd, slogdet, sort): per returned tensor, "saved" (modifying it
    # breaks backward), "free" (it is in the graph, nothing keeps it) or "nograd" (indices, ranks); () for one tensor.
    outputs: tuple[str, ...] = ()

    def printed(self, column: str, qualified_name: str | None = None) -> str | None:
        """The X of "output 0 of X" in `column` for one name (or for every name, when they agree); None when
        torch prints none or the names disagree."""
        values = getattr(self, column)
        if not values:
            return None
        if qualified_name is not None and qualified_name in self.names:
            value = values[self.names.index(qualified_name)]
        elif len(set(values)) == 1:
            value = values[0]
        else:
            return None
        return None if value == "-" else value


@dataclass(frozen=True)
class OpTable:
    rows: tuple[OpRow, ...]
    by_name: dict[str, OpRow]  # qualified name -> row

    def get(self, qualified_name: str) -> OpRow | None:
        return self.by_name.get(qualified_name)


def _yes_no(value: str, column: str, op: str) -> bool:
    if value not in ("yes", "no"):
        raise ValueError(f"op table row {op}: {column} must be yes or no, not {value!r}")
    return value == "yes"


def _one_of(value: str, allowed: tuple[str, ...], column: str, op: str) -> str:
    if value not in allowed:
        raise ValueError(f"op table row {op}: {column} must be one of {'|'.join(allowed)}, not {value!r}")
    return value


def _per_name(value: str | None, names: tuple[str, ...], column: str, op: str) -> tuple[str, ...]:
    values = (value or "").split()
    if not values:
        return ()
    if len(values) == 1:
        return tuple(values) * len(names)
    if len(values) != len(names):
        raise ValueError(f"op table row {op}: {column} has {len(values)} values for {len(names)} names")
    return tuple(values)


def parse_op_table(text: str) -> OpTable:
    """Parse the CSV text (lines starting with '#' are comments)."""
    lines = [line for line in io.StringIO(text) if not line.startswith("#") and line.strip()]
    rows: list[OpRow] = []
    by_name: dict[str, OpRow] = {}
    for rec in csv.DictReader(lines):
        op = rec["op"]
        kind = _one_of(rec["kind"], KINDS, "kind", op)
        params = _yes_no(rec["params"], "params", op) if kind == "module" else None
        names = tuple(rec["names"].split())
        row = OpRow(
            op=op,
            kind=kind,
            saves_input=_one_of(rec["saves_input"], SAVES_INPUT, "saves_input", op),
            saves_output=_yes_no(rec["saves_output"], "saves_output", op),
            view=_one_of(rec["view"], VIEWS, "view", op),
            params=params,
            names=names,
            has_params=_yes_no(rec["has_params"], "has_params", op) if kind == "module" and rec.get("has_params") else None,
            output_of=_per_name(rec.get("output_of"), names, "output_of", op),
            inplace_output_of=_per_name(rec.get("inplace_output_of"), names, "inplace_output_of", op),
            params_output_of=_per_name(rec.get("params_output_of"), names, "params_output_of", op),
            outputs=tuple(_one_of(w, OUTPUTS, "outputs", op) for w in (rec.get("outputs") or "").split()),
        )
        for name in row.names:
            if name in by_name:
                raise ValueError(f"op table: {name} is in rows {by_name[name].op} and {op}")
            by_name[name] = row
        rows.append(row)
    return OpTable(rows=tuple(rows), by_name=by_name)


@functools.cache
def load_op_table() -> OpTable:
    """The op table shipped with gradguard (read once, then cached)."""
    text = resources.files(__name__).joinpath("op_table.csv").read_text(encoding="utf-8")
    return parse_op_table(text)
