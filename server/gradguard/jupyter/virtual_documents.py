"""Which cell a line of JupyterLab's notebook document is in, so that messages say `line 2 of cell 3` there too.

jupyterlab-lsp sends a notebook to a language server as one Python document (`<root>/.virtual_documents/nb.ipynb`
beside pylsp; `<root>/nb.ipynb` itself when gradguard runs alone):
every cell in order, each followed by two blank lines, a markdown cell as one empty line, magics rewritten line for
line. It sends no cell boundaries, so they are read from the notebook as saved (`<root>/nb.ipynb`) and matched
line by line with the document: edits inside code cells since the last save move the boundaries with them. Where
the matching cannot tell (a cell added, removed or turned into markdown, a markdown cell moved, blank lines added
beside a boundary, and not saved yet) there is no map, and messages keep the document's own line numbers until the
notebook is saved.
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
    """The notebook a JupyterLab document stands for: `<root>/.virtual_documents/sub/nb.ipynb` -> `<root>/sub/nb.ipynb`
    when a server that needs documents on disk (pylsp) runs beside gradguard; the document's own path
    (`<root>/sub/nb.ipynb`) when gradguard runs alone, as jupyterlab-lsp then writes no virtual documents."""
    if not virtual_path.endswith(".ipynb"):
        return None
    name = os.path.basename(os.environ.get("JP_LSP_VIRTUAL_DIR", "").rstrip("/\\")) or VIRTUAL_DIR
    parts = virtual_path.replace("\\", "/").split("/")
    if name not in parts[:-1]:
        return virtual_path
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
    # lines of `expected` that no edit inside a code cell can reach: the padding after each cell, markdown cells
    structural: set[int] = set()
    for number, (kind, lines) in enumerate(cells, start=1):
        if number > 1:
            structural.update(range(len(expected), len(expected) + BLANK_LINES_BETWEEN_CELLS))
            expected.extend([""] * BLANK_LINES_BETWEEN_CELLS)
        if kind == "code":
            starts.append((number, len(expected)))
        else:
            structural.update(range(len(expected), len(expected) + len(lines)))
        expected.extend(lines)
    expected.append("")  # every cell's text ends with a newline
    if not starts or max(len(actual), len(expected)) > MAX_LINES:
        return None
    # Cells are numbered by place, so the map holds while the document has the saved notebook's sequence of code
    # and markdown cells, whatever the code cells now hold (lines edited, added, removed, even code cells moved
    # among themselves). A cell added, removed, joined or changed to markdown, or not told apart, gives no map.
    moved: dict[int, int] = {}  # expected line -> actual line, where the two are the same line
    for tag, i1, i2, j1, j2 in _opcodes(expected, actual):
        if tag == "equal":
            moved.update((i1 + k, j1 + k) for k in range(i2 - i1))
            continue
        if tag == "replace" and i2 - i1 == j2 - j1:  # lines edited in place
            if any(actual[j1 + k] for k in range(i2 - i1) if i1 + k in structural):
                return None  # text where the padding or a markdown cell was
            moved.update((i1 + k, j1 + k) for k in range(i2 - i1))
            continue
        if any(i in structural for i in range(i1, i2)):
            return None  # the padding or a markdown cell went away
        added = actual[j1:j2]
        if any(not added[k] and not added[k + 1] for k in range(len(added) - 1)):
            return None  # two blank lines added: maybe a new cell, maybe not; the saved notebook cannot tell
        if tag == "insert" and i1 in structural and i1 - 1 in structural:
            return None  # text between the padding and a markdown cell: a new cell
    numbers, firsts = [], []
    for number, first in starts:
        start = 0 if first == 0 else _start_after_padding(first, expected, actual, moved)
        if start is None or (firsts and start <= firsts[-1]):
            return None
        numbers.append(number)
        firsts.append(start)
    return CellMap(numbers, firsts)


def _opcodes(expected: list[str], actual: list[str]):
    """difflib's opcodes, matched only between the common head and tail: an edit is in one place, and difflib
    over the whole of a 3,600-line notebook took a second (its blank lines match everywhere)."""
    n = min(len(expected), len(actual))
    head = 0
    while head < n and expected[head] == actual[head]:
        head += 1
    tail = 0
    while tail < n - head and expected[-1 - tail] == actual[-1 - tail]:
        tail += 1
    if head:
        yield "equal", 0, head, 0, head
    middle = difflib.SequenceMatcher(None, expected[head:len(expected) - tail], actual[head:len(actual) - tail],
                                     autojunk=False)
    for tag, i1, i2, j1, j2 in middle.get_opcodes():
        yield tag, head + i1, head + i2, head + j1, head + j2
    if tail:
        yield "equal", len(expected) - tail, len(expected), len(actual) - tail, len(actual)


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
