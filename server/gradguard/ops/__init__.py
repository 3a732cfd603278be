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


def parse_op_table(text: str) -> OpTable:
    """Parse the CSV text (lines starting with '#' are comments)."""
    lines = [line for line in io.StringIO(text) if not line.startswith("#") and line.strip()]
    rows: list[OpRow] = []
    by_name: dict[str, OpRow] = {}
    for rec in csv.DictReader(lines):
        op = rec["op"]
        kind = _one_of(rec["kind"], KINDS, "kind", op)
        params = _yes_no(rec["params"], "params", op) if kind == "module" else None
        row = OpRow(
            op=op,
            kind=kind,
            saves_input=_one_of(rec["saves_input"], SAVES_INPUT, "saves_input", op),
            saves_output=_yes_no(rec["saves_output"], "saves_output", op),
            view=_one_of(rec["view"], VIEWS, "view", op),
            params=params,
            names=tuple(rec["names"].split()),
            has_params=_yes_no(rec["has_params"], "has_params", op) if kind == "module" and rec.get("has_params") else None,
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
