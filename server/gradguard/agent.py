"""What coding agents get from gradguard: the MCP server's tools (`gradguard mcp`) and the VS Code extension's
Language Model Tools (through the language server's `gradguard.agent*` commands) answer with the same records.

A record is the CLI's JSON finding (`gradguard check --format json`) made flat: 1-based `line`/`column`, the
cell for a notebook, and `fixes` with a title, a safety and the edits. `findings_text` says the same as short
lines a model reads well (and a person, in a chat).
"""
from __future__ import annotations

from typing import Any

from .output.json import finding_json, parse_note_json


def _place(loc: dict, end: dict, item: dict) -> dict:
    out = {"line": loc["row"], "column": loc["column"], "end_line": end["row"], "end_column": end["column"]}
    if "cell" in item:
        out["cell"] = item["cell"]
    return out


def finding_record(path: str, finding, result=None) -> dict[str, Any]:
    """One finding as an agent gets it; `result` (a checking.FileResult) carries a notebook's cells."""
    item = finding_json(path, finding, result)
    record = {"code": item["code"], "name": item["name"], "severity": item["severity"], "message": item["message"],
              **_place(item["location"], item["end_location"], item)}
    fix = item["fix"]
    record["fixes"] = [] if fix is None else [{
        "title": fix["message"],
        "safety": fix["applicability"],
        "edits": [{**_place(e["location"], e["end_location"], e), "new_text": e["content"]} for e in fix["edits"]],
    }]
    record["related"] = [{"message": r["message"], **_place(r["location"], r["end_location"], r)}
                         for r in item["related"]]
    record["runtime_error"] = item["runtime_error"]
    record["explanation"] = item["explanation"]
    return record


def note_record(path: str, note, result=None) -> dict[str, Any]:
    """A block that could not be parsed (nothing in it was checked)."""
    item = parse_note_json(path, note, result)
    return {"message": item["message"], **_place(item["location"], item["end_location"], item)}


def check_record(path: str, findings, notes, result=None) -> dict[str, Any]:
    """The answer to a `check`: the file, its findings and the blocks not analysed."""
    return {"path": path,
            "findings": [finding_record(path, f, result) for f in findings],
            "not_analysed": [note_record(path, n, result) for n in notes]}


def _where(path: str, item: dict) -> str:
    """`path:3:5`, or `nb.ipynb:cell 4:3:5` in a notebook: the CLI's place, cells counted as the editor shows them."""
    if "cell" in item:
        return f"{path}:cell {item['cell']}:{item['line']}:{item['column']}"
    return f"{path}:{item['line']}:{item['column']}"


def _edit_text(edit: dict) -> str:
    span = f"{edit['line']}:{edit['column']}-{edit['end_line']}:{edit['end_column']}"
    if "cell" in edit:
        span = f"{span} of cell {edit['cell']}"
    new = edit["new_text"]
    return f"replace {span} with {new!r}" if new else f"delete {span}"


def findings_text(record: dict[str, Any]) -> str:
    """A check record as text: one block per finding with its fix and the timeline of versions."""
    path, findings, notes = record["path"], record["findings"], record["not_analysed"]
    if not findings and not notes:
        return f"{path}: no findings."
    head = f"{path}: {len(findings)} finding{'s' if len(findings) != 1 else ''}"
    if notes:
        head += f", {len(notes)} block{'s' if len(notes) != 1 else ''} not analysed"
    lines = [head + "."]
    for f in findings:
        lines.append(f"{_where(path, f)}: {f['code']} ({f['name']}, {f['severity']}) {f['message']}")
        for fix in f["fixes"]:
            edits = "; ".join(_edit_text(e) for e in fix["edits"])
            lines.append(f"  fix ({fix['safety']}): {fix['title']}" + (f": {edits}" if edits else ""))
        if f["explanation"]:
            lines.extend("  " + line for line in f["explanation"].splitlines() if line.strip())
    for n in notes:
        lines.append(f"{_where(path, n)}: not analysed: {n['message']}")
    return "\n".join(lines)
