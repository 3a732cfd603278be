"""Which cell a line of JupyterLab's notebook document is in, so that messages say `line 2 of cell 3` there too.

jupyterlab-lsp sends a notebook to a language server as one Python document (`<root>/.virtual_documents/nb.ipynb`):
every cell in order, each followed by two blank lines, a markdown cell as one empty line, magics rewritten line for
line. It sends no cell boundaries, so they are read from the notebook as saved (`<root>/nb.ipynb`) and matched
line by line with the document: edits inside cells since the last save move the boundaries with them; where the
matching cannot tell (a cell added, removed or moved and not saved yet) there is no map, and messages keep the
document's own line numbers until the notebook is saved.
"""
from __future__ import annotations

import difflib
import json
import os
import threading

from ..notebook import CellMap

VIRTUAL_DIR = ".virtual_documents"  # jupyter-lsp's default; JP_LSP_VIRTUAL_DIR renames it
BLANK_LINES_BETWEEN_CELLS = 2  # @jupyterlab/lsp's VirtualDocument.blankLinesBetweenCells
MAX_NOTEBOOK_BYTES = 64 * 1024 * 1024
MAX_LINES = 50_000  # matching costs about lines x changed lines; past this, no map

_cache_lock = threading.Lock()
_cache: dict[str, tuple[tuple, list | None]] = {}  # notebook path -> ((mtime, size), its cells)


def saved_notebook(virtual_path: str) -> str | None:
    """The notebook a virtual document stands for: `<root>/.virtual_documents/sub/nb.ipynb` -> `<root>/sub/nb.ipynb`."""
    if not virtual_path.endswith(".ipynb"):
        return None
    name = os.path.basename(os.environ.get("JP_LSP_VIRTUAL_DIR", "").rstrip("/\\")) or VIRTUAL_DIR
    parts = virtual_path.replace("\\", "/").split("/")
    if name not in parts[:-1]:
        return None
    at = len(parts) - 1 - parts[:-1][::-1].index(name) - 1
    return "/".join(parts[:at] + parts[at + 1:])


def _saved_cells(path: str) -> list[tuple[str, list[str]]] | None:
    """(cell type, the lines jupyterlab-lsp makes of it) of each cell of the saved notebook, re-read when it changes."""
    from ..fileio import SourceError, read_regular

    try:
        st = os.stat(path)
    except OSError:
        return None
    key = (st.st_mtime_ns, st.st_size)
    with _cache_lock:
        hit = _cache.get(path)
    if hit is not None and hit[0] == key:
        return hit[1]
    cells = None
    try:
        data = json.loads(read_regular(path, MAX_NOTEBOOK_BYTES).decode("utf-8-sig"))
        raw = data.get("cells") if isinstance(data, dict) else None
        if isinstance(raw, list):
            cells = []
            for cell in raw:
                cell = cell if isinstance(cell, dict) else {}
                kind = str(cell.get("cell_type", ""))
                source = cell.get("source", "")
                source = "".join(str(s) for s in source) if isinstance(source, list) else str(source)
                # the editor's text, split as @jupyterlab/lsp splits it; a markdown cell goes to a document of its own
                cells.append((kind, source.replace("\r\n", "\n").split("\n") if kind == "code" else [""]))
    except (SourceError, ValueError, UnicodeDecodeError):
        cells = None
    with _cache_lock:
        if len(_cache) > 64:
            _cache.clear()
        _cache[path] = (key, cells)
    return cells


def cell_map(virtual_path: str, text: str) -> CellMap | None:
    """Where each code cell of the notebook starts in JupyterLab's document `text`, numbered among all its cells;
    None for another document, or when the saved notebook cannot say."""
    path = saved_notebook(virtual_path)
    cells = _saved_cells(path) if path is not None else None
    if not cells:
        return None
    actual = text.split("\n")
    expected: list[str] = []
    starts: list[tuple[int, int]] = []  # (cell number, first line in `expected`) of each code cell
    boundaries: set[int] = set()  # lines of `expected` that are the padding after a cell
    for number, (kind, lines) in enumerate(cells, start=1):
        if number > 1:
            boundaries.update(range(len(expected), len(expected) + BLANK_LINES_BETWEEN_CELLS))
            expected.extend([""] * BLANK_LINES_BETWEEN_CELLS)
        if kind == "code":
            starts.append((number, len(expected)))
        expected.extend(lines)
    expected.append("")  # every cell's text ends with a newline
    if not starts or max(len(actual), len(expected)) > MAX_LINES:
        return None
    moved: dict[int, int] = {}  # expected line -> actual line, where the two are the same line
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, expected, actual, autojunk=False).get_opcodes():
        if tag == "equal" or (tag == "replace" and i2 - i1 == j2 - j1):  # same lines, or lines edited in place
            moved.update((i1 + k, j1 + k) for k in range(i2 - i1))
            continue
        if any(i in boundaries for i in range(i1, i2)):
            return None  # a cell boundary went away: a cell removed or joined, not saved yet
        added = actual[j1:j2]
        if any(not added[k] and not added[k + 1] for k in range(len(added) - 1)):
            return None  # two blank lines added: maybe a new cell, maybe not; the saved notebook cannot tell
    numbers, firsts = [], []
    for number, first in starts:
        start = 0 if first == 0 else _start_after_padding(first, expected, actual, moved)
        if start is None or (firsts and start <= firsts[-1]):
            return None
        numbers.append(number)
        firsts.append(start)
    return CellMap(numbers, firsts)


def _start_after_padding(first: int, expected: list[str], actual: list[str], moved: dict[int, int]) -> int | None:
    """Where a cell starts in `actual`: after the padding before it (a line added at the cell's top is the cell's).
    The run of blank lines around the padding must be as long as saved: a blank line added at the end of the
    cell before or at the top of this one could be on either side of the padding."""
    if first - 1 not in moved:
        return None
    start = moved[first - 1] + 1

    def run(lines: list[str], at: int) -> tuple[int, int]:
        lo, hi = at, at
        while lo > 0 and not lines[lo - 1]:
            lo -= 1
        while hi + 1 < len(lines) and not lines[hi + 1]:
            hi += 1
        return lo, hi

    (e_lo, e_hi), (a_lo, a_hi) = run(expected, first - 1), run(actual, start - 1)
    if actual[start - 1] or e_hi - e_lo != a_hi - a_lo or first - 1 - e_lo != start - 1 - a_lo:
        return None
    return start
