"""`--format sarif`: SARIF 2.1.0, files not read and code not analysed as tool notifications."""
from __future__ import annotations

import json
from typing import TYPE_CHECKING

from .. import __version__
from ..source import Span
from .common import DOCS_URL, _file_lines, _unused_message, artifact_uri

if TYPE_CHECKING:
    from ..checking import FileResult, UnusedNoqa  # noqa: F401


def format_sarif(results: list[FileResult], unused: dict | None = None) -> str:
    from ..rules import all_rules

    rules = [
        {"id": r.code, "name": r.name, "shortDescription": {"text": r.summary["en"]},
         "fullDescription": {"text": r.what["en"]}, **({"helpUri": DOCS_URL.format(code=r.code)} if DOCS_URL else {}),
         "help": {"text": r.summary["en"], "markdown": r.docs("en")},
         "defaultConfiguration": {"level": "error" if r.severity == "error" else "warning"}}
        for r in all_rules()
    ]
    if any((unused or {}).values()):
        rules.append({"id": "unused-noqa", "name": "unused-noqa",
                      "shortDescription": {"text": "A suppression comment that suppresses nothing."},
                      "defaultConfiguration": {"level": "warning"}})
    sarif_results = []
    for r in results:
        uri = artifact_uri(r.path)
        file_line = _file_lines(r)

        def region(span: Span) -> dict:
            if file_line is not None:  # a notebook: the lines of the JSON text; the cell's own place in properties
                return {"startLine": file_line(span.start_line), "endLine": file_line(span.end_line)}
            return {"startLine": span.start_line + 1, "startColumn": span.start_col + 1,
                    "endLine": span.end_line + 1, "endColumn": span.end_col + 1}

        def cell_place(span: Span) -> dict:
            cell, line = r.where(span.start_line)
            return {"cell": cell, "cellLine": line + 1, "cellColumn": span.start_col + 1}

        for f in r.findings:
            item = {
                "ruleId": f.code,
                "level": "error" if f.severity == "error" else "warning",
                "message": {"text": f.message},
                "locations": [{"physicalLocation": {"artifactLocation": {"uri": uri}, "region": region(f.span)}}],
                "relatedLocations": [
                    {"id": i, "message": {"text": rel.message},
                     "physicalLocation": {"artifactLocation": {"uri": artifact_uri(rel.path) if rel.path else uri},
                                          "region": region(rel.span) if not rel.path else {
                                              "startLine": rel.span.start_line + 1,
                                              "startColumn": rel.span.start_col + 1,
                                              "endLine": rel.span.end_line + 1, "endColumn": rel.span.end_col + 1}}}
                    for i, rel in enumerate(f.related)
                ],
            }
            if r.cells is not None:
                item["properties"] = cell_place(f.span)
            if f.fix and r.cells is None:  # a notebook's edits cannot be said in the JSON text's lines and columns
                item["fixes"] = [{
                    "description": {"text": f"{f.fix.message} ({f.fix.applicability})"},
                    "artifactChanges": [{"artifactLocation": {"uri": uri}, "replacements": [
                        {"deletedRegion": region(e.span), "insertedContent": {"text": e.new_text}} for e in f.fix.edits]}],
                }]
            sarif_results.append(item)
        for u in (unused or {}).get(r.path, []):
            span = Span(u.line, u.col, u.line, u.col)
            item = {"ruleId": "unused-noqa", "level": "warning", "message": {"text": _unused_message(u, "en")},
                    "locations": [{"physicalLocation": {"artifactLocation": {"uri": uri}, "region": region(span)}}]}
            if r.cells is not None:
                item["properties"] = cell_place(span)
            sarif_results.append(item)
    doc = {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{"tool": {"driver": {"name": "gradguard", "version": __version__, "rules": rules}},
                  "invocations": [_sarif_invocation(results)],
                  "results": sarif_results}],
    }
    return json.dumps(doc, indent=2, ensure_ascii=False)


def _sarif_invocation(results: list[FileResult]) -> dict:
    """Files that could not be read and code that was not analysed, as SARIF tool notifications."""
    notes = []
    for r in results:
        uri = artifact_uri(r.path)
        if r.error:
            notes.append({"level": "error", "message": {"text": r.error},
                          "locations": [{"physicalLocation": {"artifactLocation": {"uri": uri}}}]})
        file_line = _file_lines(r) if r.notes else None
        for n in r.notes:
            where = ({"startLine": file_line(n.span.start_line)} if file_line is not None
                     else {"startLine": n.span.start_line + 1, "startColumn": n.span.start_col + 1})
            notes.append({"level": "error", "message": {"text": n.message},
                          "locations": [{"physicalLocation": {"artifactLocation": {"uri": uri}, "region": where}}]})
    return {"executionSuccessful": not notes, "toolExecutionNotifications": notes}
