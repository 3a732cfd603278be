"""What every output format shares: places as users count them (notebook cells), messages of unused suppressions."""
from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import quote
from typing import TYPE_CHECKING

from ..fileio import DEFAULT_MAX_BYTES, SourceError, read_regular
from ..notebook import Notebook, NotebookError
from ..source import Span

if TYPE_CHECKING:
    from ..checking import FileResult, UnusedNoqa  # noqa: F401


def _loc(span: Span, result: FileResult | None = None, end: bool = False) -> dict:
    line, col = (span.end_line, span.end_col) if end else (span.start_line, span.start_col)
    if result is not None and result.cells is not None:
        line = result.where(line)[1]
    return {"row": line + 1, "column": col + 1}


# Equal to gradguard.rules.DOCS_URL (a test checks): a cached run never imports the rules (nor libcst).
DOCS_URL = ""  # no website: the docs are `gradguard rule CODE` and the editor's rule-docs command


def _in_cell(item: dict, span: Span, result: FileResult | None) -> dict:
    """A related place or an edit of a notebook names its own cell (it may be another cell than the finding's)."""
    if result is not None and result.cells is not None:
        item["cell"] = result.where(span.start_line)[0]
    return item


def _place(r: FileResult, line: int, col: int) -> str:
    """`path:3:5`, or `nb.ipynb:cell 2:1:5` in a notebook."""
    cell, local = r.where(line)
    where = f"cell {cell}:" if cell is not None else ""
    return f"{where}{local + 1}:{col + 1}"


def _line_said(cell: int | None, line: int, lang: str) -> str:
    """A 0-based line as messages say it: 'line 3', or in a notebook 'line 3 of cell 4' (cells counted as the editor
    shows them, markdown included), the words of the language server's diagnostics and hover too."""
    if cell is None:
        return f"第 {line + 1} 行" if lang == "zh" else f"line {line + 1}"
    return f"第 {cell} 个单元格第 {line + 1} 行" if lang == "zh" else f"line {line + 1} of cell {cell}"


_CONTROLS = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f]")
_CONTROLS_BUT_LINE_ENDS = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


def printable(text: str, line_ends: bool = False) -> str:
    """`text` from a repository (a file name, a line of code, a message quoting it) safe for a terminal or a CI log:
    C0 and C1 controls other than tab (and CR/LF with `line_ends`) shown as `\\x1b`, so no ESC sequence sets the
    title, clears the screen or writes the clipboard (OSC 52)."""
    pattern = _CONTROLS_BUT_LINE_ENDS if line_ends else _CONTROLS
    return pattern.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def _color(enabled: bool):
    def paint(text: str, code: str) -> str:
        return f"\x1b[{code}m{text}\x1b[0m" if enabled else text
    return paint


def _unused_message(u: UnusedNoqa, lang: str) -> str:
    if lang == "zh":
        return (f"未使用的抑制注释（{', '.join(u.codes)} 在此处没有报告）" if u.codes
                else f"未使用的抑制注释 `{u.directive}`（没有要抑制的问题）")
    return (f"unused suppression ({', '.join(u.codes)} not reported here)" if u.codes
            else f"unused suppression `{u.directive}` (nothing to suppress)")


def _shorten(text: str, limit: int = 160) -> str:
    """Whole sentences only: drop trailing sentences (torch's anomaly-detection hint) past `limit`, never the
    first one, never part of a word."""
    if len(text) <= limit:
        return text
    end = text.rfind(". ", 0, limit)
    if end < 0:
        end = text.find(". ")
    return text[: end + 1] if end >= 0 else text


def _file_lines(r: FileResult):
    """For a notebook: analysed line -> 1-based line of the `.ipynb` text that holds it (GitHub and SARIF point
    into the file as it is on disk, after --fix); None for a Python file."""
    if r.cells is None:
        return None
    try:
        if r.notebook is not None:
            nb = Notebook.from_text(r.notebook.dumps())
        else:  # a cached result: the file is what was checked
            nb = Notebook.from_text(read_regular(r.path, DEFAULT_MAX_BYTES * 100).decode("utf-8-sig"))
    except (SourceError, NotebookError, UnicodeDecodeError):
        return lambda line: 1
    return lambda line: nb.file_line(*r.where(line))


def artifact_uri(path: str) -> str:
    """A SARIF artifactLocation URI: a relative reference or a file: URI, percent-encoded (RFC 3986)."""
    p = Path(path)
    if p.is_absolute():
        return p.as_uri()
    return quote(p.as_posix(), safe="/")
