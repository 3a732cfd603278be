"""Findings -> LSP diagnostics. Positions go through the negotiated position codec."""
from __future__ import annotations

import itertools
from typing import Any, Union

import attrs
from lsprotocol import types
from pygls.uris import from_fs_path
from pygls.workspace.position_codec import PositionCodec

from ..findings import Finding, ParseNote
from ..source import Span
from .documents import Snapshot
from .settings import Settings

SOURCE = "gradguard"

_SEVERITY = {
    "error": types.DiagnosticSeverity.Error,
    "warning": types.DiagnosticSeverity.Warning,
    "information": types.DiagnosticSeverity.Information,
    "hint": types.DiagnosticSeverity.Hint,
}


@attrs.define
class MarkdownDiagnostic(types.Diagnostic):
    """LSP 3.18: a diagnostic whose message is Markdown, for clients that declare `markupMessageSupport`
    (lsprotocol 2025.0.0 types the message as a string only; pygls sends the MarkupContent as its JSON)."""

    message: Union[str, types.MarkupContent] = attrs.field(kw_only=True)


def markup_message_support(initialize_params: Any) -> bool:
    """Whether the client's raw `initialize` params declare Markdown diagnostic messages (LSP 3.18), for pushed
    or pulled diagnostics; read from the JSON, as lsprotocol drops the field it does not know."""
    try:
        text_document = initialize_params["capabilities"]["textDocument"]
        return any(isinstance(text_document.get(kind), dict) and text_document[kind].get("markupMessageSupport") is True
                   for kind in ("publishDiagnostics", "diagnostic"))
    except (KeyError, TypeError, AttributeError):
        return False


def markdown_message(finding: Finding) -> str:
    """The Problems panel's Markdown: the message, the version timeline hover shows, and torch's error."""
    parts = [finding.message]
    if finding.explanation:
        parts.append(finding.explanation)
    if finding.runtime_error:
        fence = "````" if "```" in finding.runtime_error else "```"
        parts.append(f"torch raises:\n{fence}text\n{finding.runtime_error}\n{fence}")
    return "\n\n".join(parts)


class Positions:
    """Maps spans of the analysed text to (document URI, client range)."""

    def __init__(self, snapshot: Snapshot, codec: PositionCodec):
        self.snapshot = snapshot
        self.codec = codec
        self.lines = snapshot.text.split("\n")
        self._units: dict[int, list[int] | int] = {}  # line -> client units before each column (ASCII: its length)

    def _client_col(self, line: int, col: int) -> int:
        """Client units before code-point column `col` of `line`. Each line is measured once (2,000 findings
        on one 22 KB line once counted the line up to each column, character by character)."""
        if line not in self._units:
            text = self.lines[line] if 0 <= line < len(self.lines) else ""
            self._units[line] = len(text) if text.isascii() else list(itertools.accumulate(
                (self.codec.client_num_units(ch) for ch in text), initial=0))
        units = self._units[line]
        if isinstance(units, int):
            return min(max(col, 0), units)
        return units[min(max(col, 0), len(units) - 1)]

    def range(self, span: Span) -> tuple[str, types.Range] | None:
        located = self.snapshot.locate(span.start_line)
        if located is None:
            return None
        piece, start_local = located
        end_line, end_col = span.end_line, span.end_col
        last = piece.start_line + max(piece.line_count, 1) - 1
        if end_line > last:  # never let a range run into the next cell
            end_line, end_col = last, len(self.lines[last]) if last < len(self.lines) else 0
        rng = types.Range(
            start=types.Position(line=start_local, character=self._client_col(span.start_line, span.start_col)),
            end=types.Position(line=end_line - piece.start_line, character=self._client_col(end_line, end_col)),
        )
        return piece.uri, rng

    def to_analysed(self, uri: str, position: types.Position) -> tuple[int, int] | None:
        """A client position in document `uri` as (line, code-point column) of the analysed text."""
        piece = self.snapshot.piece_for(uri)
        if piece is None:
            return None
        line = piece.start_line + position.line
        text = self.lines[line] if 0 <= line < len(self.lines) else ""
        units = 0
        col = 0
        for ch in text:
            if units >= position.character:
                break
            units += self.codec.client_num_units(ch)
            col += 1
        return line, col


def range_json(rng: types.Range) -> dict[str, Any]:
    return {
        "start": {"line": rng.start.line, "character": rng.start.character},
        "end": {"line": rng.end.line, "character": rng.end.character},
    }


def range_from_json(raw: dict[str, Any]) -> types.Range:
    return types.Range(
        start=types.Position(line=raw["start"]["line"], character=raw["start"]["character"]),
        end=types.Position(line=raw["end"]["line"], character=raw["end"]["character"]),
    )


def severity(finding: Finding, settings: Settings) -> types.DiagnosticSeverity:
    chosen = settings.severity_for(finding.code) or finding.severity
    return _SEVERITY.get(chosen, types.DiagnosticSeverity.Error)


def finding_diagnostic(
    finding: Finding, positions: Positions, settings: Settings, markdown: bool = False, lang: str = "en"
) -> tuple[str, types.Diagnostic] | None:
    """The diagnostic for one finding and the URI it belongs to (a cell for notebooks); with `markdown` (the
    client declared `markupMessageSupport`), its message is Markdown with the explanation hover shows."""
    located = positions.range(finding.span)
    if located is None:
        return None
    uri, rng = located
    snapshot = positions.snapshot
    piece = snapshot.piece_for(uri)
    # VS Code labels a related location by the file's name and the line in the cell (`train.ipynb(3, 9)`), never
    # the cell: in a notebook the note says it (`line 3 of cell 6: saved for backward here`)
    in_cells = snapshot.is_notebook or snapshot.jupyter_cells is not None
    related = []
    for rel in finding.related:
        if rel.path:  # a place in another project file (its columns counted in code points)
            span = rel.span
            rel_range = types.Range(types.Position(span.start_line, span.start_col),
                                    types.Position(span.end_line, span.end_col))
            related.append(types.DiagnosticRelatedInformation(
                location=types.Location(uri=from_fs_path(rel.path) or rel.path, range=rel_range),
                message=rel.message))
            continue
        rel_loc = positions.range(rel.span)
        if rel_loc is not None:
            message = rel.message
            if in_cells:
                message = snapshot.describe_line(rel.span.start_line, lang) + ("：" if lang == "zh" else ": ") + message
            related.append(
                types.DiagnosticRelatedInformation(
                    location=types.Location(uri=rel_loc[0], range=rel_loc[1]), message=message
                )
            )
    fix = None
    if finding.fix is not None:
        edits = []
        for edit in finding.fix.edits:
            edit_loc = positions.range(edit.span)
            if edit_loc is None:
                edits = None
                break
            edits.append({"uri": edit_loc[0], "range": range_json(edit_loc[1]), "newText": edit.new_text})
        if edits:
            fix = {"applicability": finding.fix.applicability, "message": finding.fix.message, "edits": edits}
    data = {
        "code": finding.code,
        "name": finding.name,
        "version": piece.version if piece else None,
        "fix": fix,
        # The line a `# noqa: CODE` comment goes on (the engine reads it on the finding's first line).
        "noqa": {"line": rng.start.line},
    }
    diag = (MarkdownDiagnostic if markdown else types.Diagnostic)(
        range=rng,
        message=types.MarkupContent(kind=types.MarkupKind.Markdown, value=markdown_message(finding))
        if markdown else finding.message,
        severity=severity(finding, settings),
        code=finding.code,
        source=SOURCE,
        related_information=related or None,
        data=data,
    )
    if settings.docs_url:
        # replace, not str.format: a `{` elsewhere in the user's URL must not fail the analysis
        diag.code_description = types.CodeDescription(href=settings.docs_url.replace("{code}", finding.code))
    return uri, diag


def parse_note_diagnostic(note: ParseNote, positions: Positions, lang: str) -> tuple[str, types.Diagnostic] | None:
    """A block that does not parse: one unobtrusive hint; the other blocks keep their findings."""
    located = positions.range(Span(note.span.start_line, note.span.start_col, note.span.start_line, 10**6))
    if located is None:
        return None
    uri, rng = located
    prefix = "gradguard 未分析此代码块：" if lang == "zh" else "gradguard skipped this block: "
    return uri, types.Diagnostic(
        range=rng,
        message=prefix + note.message,
        severity=types.DiagnosticSeverity.Hint,
        source=SOURCE,
        data={"parseNote": True},
    )
