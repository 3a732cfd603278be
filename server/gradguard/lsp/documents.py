"""What the server analyses: a text document, or a notebook's code cells as one program.

A `Snapshot` is the text handed to the engine plus how to map its lines back to
the documents the client knows (one for a file, one per cell for a notebook).
Columns are code points everywhere here; client units appear only in convert.py.
"""
from __future__ import annotations

import bisect
import re
from dataclasses import dataclass
from urllib.parse import unquote

from lsprotocol import types
from pygls.uris import to_fs_path
from pygls.workspace import TextDocument, Workspace

from ..notebook import CellMap, python_lines


@dataclass(frozen=True)
class Piece:
    """A document's lines inside the analysed text."""

    uri: str  # as the client sent it when it opened the document: diagnostics are published under it
    start_line: int  # first line of this document in the analysed text
    line_count: int
    version: int | None
    cell: int = 0  # for a notebook cell: its 1-based number among all the notebook's cells (as editors show them)


def doc_key(uri: str) -> str:
    """The key of a document URI, as pygls 2 keys its documents (`unquote(uri)`).

    Clients percent-encode as they like (VS Code sends `file:///c%3A/...` on Windows, `%20`, `%E4%B8%AD`);
    every lookup of a document or of its analysis goes through this one function. Apply it to URIs as the
    client sent them, never to a key (unquoting twice would decode a literal `%25`).
    """
    return unquote(uri)


def text_document(workspace: Workspace, uri: str) -> TextDocument | None:
    """The open text document of a URI as the client spelled it (any percent-encoding), or None."""
    return workspace.text_documents.get(doc_key(uri))


@dataclass
class Snapshot:
    key: str  # doc_key() of the text document URI, or of the notebook URI
    text: str
    path: str  # file system path (or the URI when there is none), for config and the engine
    pieces: list[Piece]
    notebook_version: int | None = None
    # JupyterLab's notebook, sent as one document: where its cells start (set by the analysis, from the saved notebook)
    jupyter_cells: CellMap | None = None

    @property
    def versions(self) -> tuple:
        return (self.notebook_version, tuple((p.uri, p.version) for p in self.pieces))

    @property
    def is_notebook(self) -> bool:
        return self.notebook_version is not None

    def locate(self, line: int) -> tuple[Piece, int] | None:
        """The piece holding analysed line `line`, and the line within it."""
        starts = [p.start_line for p in self.pieces]
        i = bisect.bisect_right(starts, line) - 1
        if i < 0:
            return None
        piece = self.pieces[i]
        if line >= piece.start_line + max(piece.line_count, 1):
            return None
        return piece, line - piece.start_line

    def piece_for(self, uri: str) -> Piece | None:
        key = doc_key(uri)
        for p in self.pieces:
            if p.uri == uri or doc_key(p.uri) == key:
                return p
        return None

    def describe_line(self, line: int, lang: str) -> str:
        """'line 3' for a file; 'line 1 of cell 4' for a notebook, as the diagnostics and the CLI say it (1-based;
        the cell's number counts every cell, markdown too, as the editor shows them)."""
        if not self.is_notebook and self.jupyter_cells is not None:
            cell, local = self.jupyter_cells.locate(line)
            return f"第 {cell} 个单元格第 {local + 1} 行" if lang == "zh" else f"line {local + 1} of cell {cell}"
        if not self.is_notebook:
            return f"第 {line + 1} 行" if lang == "zh" else f"line {line + 1}"
        located = self.locate(line)
        if located is None:
            return f"line {line + 1}"
        piece, local = located
        return f"第 {piece.cell} 个单元格第 {local + 1} 行" if lang == "zh" else f"line {local + 1} of cell {piece.cell}"


_LSP_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")


def lsp_newlines(text: str) -> str:
    """`\r\n` and lone `\r` as `\n`: LSP ends lines at exactly these three (as the engine does)."""
    return text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text


class LspTextDocument(TextDocument):
    """A TextDocument whose lines end only at `\n`, `\r\n` and `\r`, as LSP positions count them, and
    whose incremental changes cost the edited lines, not the whole text.

    pygls uses `str.splitlines()`, which also breaks at form feeds, U+2028, `\x1c`-`\x1e` and `\x85`:
    after such a character every incremental edit would land on the wrong line of our copy. pygls also
    rebuilds the whole text for every change (one didChange with 5,000 edits, a Replace All, took 70 s),
    clamps a character past the line end to one before it, and lets a position between `\r` and `\n`
    split a CRLF (a phantom line). Here the text is kept as a list of lines, each change splices the lines
    it touches, positions are clamped as the spec says (a character past the line end is the line end; a
    line past the last is the end of the text), and the text is joined once, when it is read. The text
    is never read from disk: only what the client sent is analysed.
    """

    def __init__(self, *args, **kwargs):
        self._line_list: list[str] | None = None
        self._lines_of: str | None = None  # the _source the line list was split from
        self._dirty = False  # the line list is newer than _source
        super().__init__(*args, **kwargs)

    @property
    def source(self) -> str:
        if self._dirty:
            self._source = "".join(self._line_list)
            self._lines_of = self._source
            self._dirty = False
        return self._source or ""

    def _lines(self) -> list[str]:
        if self._dirty:
            return self._line_list
        text = self._source or ""
        if self._line_list is None or self._lines_of is not text:
            self._line_list = _LSP_LINE.findall(text)
            self._lines_of = text
        return self._line_list

    @property
    def lines(self):
        return tuple(self._lines())

    def _server_position(self, lines: list[str], position: types.Position) -> tuple[int, int]:
        """(line, code-point column) of a client position, clamped as LSP says."""
        line_no = max(position.line, 0)
        if line_no >= len(lines):  # the end of the text
            if lines and not lines[-1].endswith(("\n", "\r")):
                return (len(lines) - 1, len(lines[-1]))
            return (len(lines), 0)
        line = lines[line_no]
        content = len(line) - (2 if line.endswith("\r\n") else 1 if line.endswith(("\n", "\r")) else 0)
        wanted = max(position.character, 0)
        if line.isascii():
            return (line_no, min(wanted, content))
        units = 0
        col = 0
        num_units = self.position_codec.client_num_units
        while col < content and units < wanted:
            units += num_units(line[col])
            col += 1
        return (line_no, col)

    def _apply_incremental_change(self, change: types.TextDocumentContentChangePartial) -> None:
        lines = self._lines()
        start = self._server_position(lines, change.range.start)
        end = self._server_position(lines, change.range.end)
        if end < start:
            start, end = end, start
        first, last = start[0], end[0]
        head = lines[first][: start[1]] if first < len(lines) else ""
        tail = lines[last][end[1]:] if last < len(lines) else ""
        last = min(last, len(lines) - 1)
        # A lone `\r` next to a `\n` would become one CRLF line end: re-split the neighbour with it.
        if first > 0 and lines[first - 1].endswith("\r") and (head or change.text or tail).startswith("\n"):
            first -= 1
            head = lines[first] + head
        text = head + change.text + tail
        if text.endswith("\r") and last + 1 < len(lines) and lines[last + 1].startswith("\n"):
            last += 1
            text += lines[last]
        lines[first: last + 1] = _LSP_LINE.findall(text)
        self._dirty = True

    def _apply_full_change(self, change) -> None:
        self._dirty = False
        self._source = change.text


def use_lsp_lines(workspace: Workspace) -> None:
    """Make the workspace create LspTextDocuments (pygls has no public hook for the document class)."""

    def create(doc_uri, source=None, version=None, language_id=None):
        return LspTextDocument(doc_uri, source=source, version=version, language_id=language_id,
                               sync_kind=workspace._sync_kind, position_codec=workspace.position_codec)

    workspace._create_text_document = create


def uri_path(uri: str) -> str:
    path = to_fs_path(uri) if uri.startswith("file:") else None
    return path or uri


def text_snapshot(workspace: Workspace, key: str) -> Snapshot | None:
    """The text document with key `key` (a doc_key())."""
    doc = workspace.text_documents.get(key)
    if doc is None:
        return None
    text = lsp_newlines(doc.source)
    line_count = text.count("\n") + 1
    return Snapshot(key, text, uri_path(doc.uri), [Piece(doc.uri, 0, line_count, doc.version)])


def notebook_snapshot(workspace: Workspace, key: str) -> Snapshot | None:
    """The notebook's code cells in order, concatenated; magics blanked, `%%` cells skipped."""
    notebook = workspace.notebook_documents.get(key)
    if notebook is None:
        return None
    chunks: list[str] = []
    pieces: list[Piece] = []
    line = 0
    for number, cell in enumerate(notebook.cells, start=1):
        if cell.kind != types.NotebookCellKind.Code:
            continue
        doc = text_document(workspace, cell.document)
        if doc is None:
            continue
        lines = python_lines(lsp_newlines(doc.source))  # shared with the CLI's notebook reader
        pieces.append(Piece(cell.document, line, len(lines), doc.version, cell=number))
        chunks.append("\n".join(lines) + "\n")
        line += len(lines)
    return Snapshot(
        key, "".join(chunks), uri_path(notebook.uri), pieces, notebook_version=notebook.version
    )


def snapshot_for(workspace: Workspace, key: str) -> Snapshot | None:
    """What to analyse for `key` (a key_for_uri() result)."""
    if key in workspace.notebook_documents:
        return notebook_snapshot(workspace, key)
    return text_snapshot(workspace, key)


def key_for_uri(workspace: Workspace, uri: str) -> str:
    """The analysis key of a document URI as the client sent it: doc_key() of its notebook's URI for a
    cell, else of its own URI."""
    notebook = workspace.get_notebook_document(cell_uri=uri)
    return doc_key(notebook.uri) if notebook is not None else doc_key(uri)


def open_keys(workspace: Workspace) -> set[str]:
    """The analysis keys of every open document and notebook."""
    return {key_for_uri(workspace, doc.uri) for doc in list(workspace.text_documents.values())}
