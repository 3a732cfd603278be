"""Jupyter notebooks for the command line: code cells analysed as one program, in order.

The language server gets cells from the client; the CLI reads the `.ipynb` JSON. Both turn a cell into
analysed lines with `python_lines` (magics blanked so the cell still parses and lines stay put).
Fix edits are mapped back to the cell they fall in and applied to that cell's own source, so outputs,
metadata, magics and the JSON layout stay as they were.
"""
from __future__ import annotations

import bisect
import json
import re
from dataclasses import dataclass, field

# A line magic or shell escape: blanked so the cell still parses and lines stay put.
MAGIC_LINE = re.compile(r"^\s*[%!]")


def python_lines(cell_text: str) -> list[str]:
    """A code cell's lines as analysed: line magics and `!` escapes blanked, a `%%` cell magic blanks the cell."""
    lines = cell_text.split("\n")
    if cell_text.endswith("\n"):
        lines.pop()
    first = next((ln for ln in lines if ln.strip()), "")
    if first.lstrip().startswith("%%"):
        lines = [""] * len(lines)  # a cell magic: the cell is not Python
    else:
        lines = ["" if MAGIC_LINE.match(ln) else ln for ln in lines]
    return lines or [""]


class NotebookError(ValueError):
    """Not a notebook gradguard can read; the message says why."""


@dataclass
class CellMap:
    """Where each analysed code cell starts in the joined program (picklable, cached with results)."""

    numbers: list[int] = field(default_factory=list)  # 1-based cell number in the notebook (all cells count)
    starts: list[int] = field(default_factory=list)  # 0-based first line in the joined program

    def locate(self, line: int) -> tuple[int, int]:
        """(cell number, 0-based line in the cell) of a joined-program line."""
        i = max(0, bisect.bisect_right(self.starts, line) - 1)
        if not self.starts:
            return 1, line
        return self.numbers[i], line - self.starts[i]

    def index(self, line: int) -> int:
        return max(0, bisect.bisect_right(self.starts, line) - 1)


def _cell_text(source) -> str:
    if isinstance(source, list):
        return "".join(str(s) for s in source)
    return source if isinstance(source, str) else ""


def _newlines(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text


class Notebook:
    """A parsed `.ipynb`: its JSON, its code cells' sources, and the joined program."""

    def __init__(self, data: dict, raw: str):
        self.data = data
        self.raw = raw
        cells = data.get("cells")
        if not isinstance(cells, list):
            raise NotebookError("not a notebook (no `cells` list); not analysed")
        self.code_cells: list[int] = [i for i, c in enumerate(cells)
                                      if isinstance(c, dict) and c.get("cell_type") == "code"]
        self.sources: list[str] = [_newlines(_cell_text(cells[i].get("source", ""))) for i in self.code_cells]

    @classmethod
    def from_text(cls, raw: str) -> "Notebook":
        try:
            data = json.loads(raw)
        except ValueError as exc:
            raise NotebookError(f"not valid notebook JSON ({exc}); not analysed") from exc
        if not isinstance(data, dict):
            raise NotebookError("not a notebook (the JSON is not an object); not analysed")
        return cls(data, raw)

    @property
    def language(self) -> str:
        meta = self.data.get("metadata")
        meta = meta if isinstance(meta, dict) else {}
        info = meta.get("language_info")
        name = info.get("name") if isinstance(info, dict) else None
        if not name:
            spec = meta.get("kernelspec")
            name = spec.get("language") if isinstance(spec, dict) else None
        return str(name or "python").lower()

    def program(self) -> tuple[str, CellMap]:
        """The code cells joined into one program, and where each cell starts in it."""
        chunks: list[str] = []
        cmap = CellMap()
        line = 0
        for index, text in zip(self.code_cells, self.sources):
            lines = python_lines(text)
            cmap.numbers.append(index + 1)
            cmap.starts.append(line)
            chunks.append("\n".join(lines) + "\n")
            line += len(lines)
        return "".join(chunks), cmap

    def apply(self, findings, cmap: CellMap) -> list:
        """Apply each finding's fix inside its cell (a fix spanning cells is skipped); the findings applied."""
        per_cell: dict[int, list] = {}
        for f in findings:
            cells = {cmap.index(e.span.start_line) for e in f.fix.edits} | {cmap.index(e.span.end_line) for e in f.fix.edits}
            if len(cells) != 1:
                continue
            per_cell.setdefault(cells.pop(), []).append(f)
        applied = []
        from .cli import apply_edits  # the same non-overlapping, last-first application as for files

        for i, group in per_cell.items():
            start = cmap.starts[i]
            local = [(f, [(e.span.start_line - start, e.span.start_col, e.span.end_line - start, e.span.end_col,
                           e.new_text) for e in f.fix.edits]) for f in group]
            self.sources[i], chosen = apply_edits(self.sources[i], local)
            applied.extend(chosen)
        return applied

    def dumps(self) -> str:
        """The notebook JSON with the (fixed) cell sources, in the file's own layout where it can be seen."""
        cells = self.data["cells"]
        for index, text in zip(self.code_cells, self.sources):
            cell = cells[index]
            old = cell.get("source", "")
            if _newlines(_cell_text(old)) == text:
                continue
            cell["source"] = text.splitlines(keepends=True) if isinstance(old, list) else text
        indent = _indent_of(self.raw)
        out = json.dumps(self.data, indent=indent, ensure_ascii=_ascii_only(self.raw))
        return out + ("\n" if self.raw.endswith("\n") else "")


def _indent_of(raw: str):
    m = re.match(r"\{\r?\n([ \t]+)", raw)
    if not m:
        return None if raw.lstrip().startswith("{") and "\n" not in raw.strip() else 1
    ws = m.group(1)
    return ws if "\t" in ws else len(ws)


def _ascii_only(raw: str) -> bool:
    """Keep `\\uXXXX` escapes if the file used them (and has no raw non-ASCII text)."""
    return "\\u" in raw and raw.isascii()
