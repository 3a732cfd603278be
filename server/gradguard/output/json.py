"""`--format json`: one object per finding, with ruff's field names plus `related`, `explanation` and `cell`."""
from __future__ import annotations

import json
from typing import TYPE_CHECKING

from ..findings import Finding, ParseNote
from ..source import Span
from .common import DOCS_URL, _in_cell, _loc, _unused_message

if TYPE_CHECKING:
    from ..checking import FileResult, UnusedNoqa  # noqa: F401


def finding_json(path: str, f: Finding, result: FileResult | None = None) -> dict:
    fix = None
    if f.fix:
        fix = {
            "applicability": f.fix.applicability,
            "message": f.fix.message,
            "edits": [_in_cell({"content": e.new_text, "location": _loc(e.span, result),
                                "end_location": _loc(e.span, result, end=True)}, e.span, result)
                      for e in f.fix.edits],
        }
    out = {
        "filename": path,
        "code": f.code,
        "name": f.name,
        "message": f.message,
        "severity": f.severity,
        "location": _loc(f.span, result),
        "end_location": _loc(f.span, result, end=True),
        "fix": fix,
        "url": DOCS_URL.format(code=f.code) if DOCS_URL else None,
        "noqa_row": _loc(f.span, result)["row"],
        "related": [_related(r, result) for r in f.related],
        "runtime_error": f.runtime_error,
        "explanation": f.explanation,
    }
    if result is not None and result.cells is not None:
        out["cell"] = result.where(f.span.start_line)[0]
    return out


def parse_note_json(path: str, note: ParseNote, result: FileResult | None = None) -> dict:
    """A block that could not be parsed, as ruff reports syntax errors: `code` is null."""
    out = {"filename": path, "code": None, "name": "syntax-error", "message": note.message, "severity": "error",
           "location": _loc(note.span, result), "end_location": _loc(note.span, result, end=True), "fix": None,
           "url": None, "noqa_row": None, "related": [], "runtime_error": "", "explanation": ""}
    if result is not None and result.cells is not None:
        out["cell"] = result.where(note.span.start_line)[0]
    return out


def format_json(results, unused: dict | None = None) -> str:
    """ruff's JSON shape: findings, then blocks not analysed (code null), then unused suppressions."""
    unused = unused or {}
    out = [finding_json(r.path, f, r) for r in results for f in r.findings]
    out += [parse_note_json(r.path, n, r) for r in results for n in r.notes]
    out += [{"filename": path, "code": None, "name": "unused-noqa", "message": _unused_message(u, "en"),
             "severity": "warning", "location": _loc(Span(u.line, u.col, u.line, u.col), r),
             "end_location": _loc(Span(u.line, u.col, u.line, u.col), r), "fix": None, "url": None,
             "noqa_row": None, "related": [], "runtime_error": "", "explanation": ""}
            for r in results for path in [r.path] for u in unused.get(path, [])]
    return json.dumps(out, indent=2, ensure_ascii=False)


def _related(r, result) -> dict:
    """A related place; one in another project file (`r.path`) names that file and counts its own lines."""
    if r.path:
        return {"message": r.message, "filename": r.path, "location": _loc(r.span),
                "end_location": _loc(r.span, end=True)}
    return _in_cell({"message": r.message, "location": _loc(r.span, result),
                     "end_location": _loc(r.span, result, end=True)}, r.span, result)
