"""`--format github`: GitHub Actions workflow commands (`::error file=...,line=...::message`)."""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..source import Span
from .common import _file_lines, _place, _unused_message, printable

if TYPE_CHECKING:
    from ..checking import FileResult, UnusedNoqa  # noqa: F401


def _gh_data(text: str) -> str:
    """A workflow command's message: `%`, CR and LF escaped (GitHub's escapeData); other controls shown as `\\x1b`
    (the log would render a repository's ESC sequences)."""
    return printable(text, line_ends=True).replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _gh_property(text: str) -> str:
    """A workflow command's property value: also `:` and `,` escaped (GitHub's escapeProperty)."""
    return _gh_data(text).replace(":", "%3A").replace(",", "%2C")


def _gh_region(r: FileResult, span: Span, file_line) -> str:
    if file_line is None:
        return (f"line={span.start_line + 1},col={span.start_col + 1},"
                f"endLine={span.end_line + 1},endColumn={span.end_col + 1}")
    # A notebook: the lines of the JSON text that hold the code; its columns are not the code's.
    return f"line={file_line(span.start_line)},endLine={file_line(span.end_line)}"


def format_github(results: list[FileResult], unused: dict | None = None) -> str:
    out = []
    for r in results:
        file_line = _file_lines(r)
        for note in r.notes:
            title = "gradguard (not analysed)" + (f" {_place(r, note.span.start_line, note.span.start_col)}"
                                                   if r.cells is not None else "")
            line = file_line(note.span.start_line) if file_line else note.span.start_line + 1
            out.append(f"::error title={_gh_property(title)},file={_gh_property(r.path)},"
                       f"line={line}::{_gh_data(note.message)}")
        for f in r.findings:
            level = "error" if f.severity == "error" else "warning"
            title = f"gradguard ({f.code})" + (f" {_place(r, f.span.start_line, f.span.start_col)}"
                                               if r.cells is not None else "")
            out.append(f"::{level} title={_gh_property(title)},file={_gh_property(r.path)},"
                       f"{_gh_region(r, f.span, file_line)}::{_gh_data(f.code + ' ' + f.message)}")
        for u in (unused or {}).get(r.path, []):
            span = Span(u.line, u.col, u.line, u.col)
            title = "gradguard (unused-noqa)" + (f" {_place(r, u.line, u.col)}" if r.cells is not None else "")
            out.append(f"::warning title={_gh_property(title)},file={_gh_property(r.path)},"
                       f"{_gh_region(r, span, file_line)}::{_gh_data(_unused_message(u, 'en'))}")
    return "\n".join(out)
