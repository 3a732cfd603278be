"""What coding agents get from gradguard: the MCP server's tools (`gradguard mcp`) and the VS Code extension's
Language Model Tools (through the language server's `gradguard.agent*` commands) answer with the same records.

A record is the CLI's JSON finding (`gradguard check --format json`) made flat: 1-based `line`/`column`, the
cell for a notebook, and `fixes` with a title, a safety and the edits. `findings_text` says the same as short
lines a model reads well (and a person, in a chat).
"""
from __future__ import annotations

import os
from typing import Any

from .checking import check_paths
from .config import ConfigResolver
from .discovery import discover
from .explain.files import inside
from .output.json import finding_json, parse_note_json


def _place(loc: dict, end: dict, item: dict) -> dict:
    out = {"line": loc["row"], "column": loc["column"], "end_line": end["row"], "end_column": end["column"]}
    if "cell" in item:
        out["cell"] = item["cell"]
    return out


def finding_record(path: str, finding, result=None, roots: list[str] | None = None) -> dict[str, Any]:
    """One finding as an agent gets it; `result` (a checking.FileResult) carries a notebook's cells; a related
    place in another file is named relative to the project folder of `roots` that holds it."""
    item = finding_json(path, finding, result)
    record = {"code": item["code"], "name": item["name"], "severity": item["severity"], "message": item["message"],
              **_place(item["location"], item["end_location"], item)}
    fix = item["fix"]
    record["fixes"] = [] if fix is None else [{
        "title": fix["message"],
        "safety": fix["applicability"],
        "edits": [{**_place(e["location"], e["end_location"], e), "new_text": e["content"]} for e in fix["edits"]],
    }]
    # a place in another project file (the backward in train.py of a write in losses.py) names that file
    record["related"] = [{"message": r["message"],
                          **({"path": shown_path(os.path.realpath(r["filename"]), roots or [])} if r.get("filename") else {}),
                          **_place(r["location"], r["end_location"], r)} for r in item["related"]]
    record["runtime_error"] = item["runtime_error"]
    record["explanation"] = item["explanation"]
    return record


def note_record(path: str, note, result=None) -> dict[str, Any]:
    """A block that could not be parsed (nothing in it was checked)."""
    item = parse_note_json(path, note, result)
    return {"message": item["message"], **_place(item["location"], item["end_location"], item)}


def check_record(path: str, findings, notes, result=None, roots: list[str] | None = None) -> dict[str, Any]:
    """The answer to a `check`: the file, its findings and the blocks not analysed."""
    return {"path": path,
            "findings": [finding_record(path, f, result, roots) for f in findings],
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
    left = record.get("findings_left_out", 0)
    if not findings and not notes and not left:
        return f"{path}: no findings."
    total = len(findings) + left
    head = f"{path}: {total} finding{'s' if total != 1 else ''}" + (f" ({left} left out below)" if left else "")
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


# ---------------------------------------------------------------- a folder or a list of files
# An agent's tool output is read whole into its context (Claude Code warns above 10,000 tokens and stops at 25,000
# by default): the answer keeps to about 40,000 characters of text and says what it left out.
MAX_ANSWER_CHARS = 40_000
MAX_PATHS = 1_000  # paths one call may name
MAX_FILES = 2_000  # files one call checks (a folder of more is cut, and the answer says so)
CHECKED_SUFFIXES = (".py", ".pyi", ".ipynb")


class PathRefused(ValueError):
    """A path gradguard will not read for an agent (outside the project, not a Python file); the message says why."""


def resolve_inside(path: str, roots: list[str], folders: bool = True) -> str:
    """The real path of `path` (relative to the first root) if it lies inside one of `roots` (resolved folders)
    and is a folder (when `folders`) or names a Python file or notebook; else PathRefused."""
    if not isinstance(path, str) or not path or "\x00" in path or len(path) > 4096:
        raise PathRefused("a path must be a non-empty file or folder path")
    candidate = path if os.path.isabs(path) else os.path.join(roots[0], path)
    for root in roots:
        real = inside(root, candidate)
        if real is None:
            continue
        if folders and os.path.isdir(real):
            return real
        if not real.endswith(CHECKED_SUFFIXES):
            raise PathRefused(f"{path}: not a Python file or notebook (.py, .pyi, .ipynb)"
                              f"{' or a folder' if folders else ''}; not checked")
        return real
    raise PathRefused(f"{path}: outside the project folder{'s' if len(roots) > 1 else ''} "
                      f"({', '.join(roots)}); not checked")


def shown_path(real: str, roots: list[str]) -> str:
    """A checked file or folder as a person names it: relative to the project folder that holds it (`.` for it)."""
    for root in roots:
        if real == root:
            return "."
        if real.startswith(root.rstrip(os.sep) + os.sep):
            return os.path.relpath(real, root)
    return real


def check_paths_for_agent(paths: list[str], roots: list[str], lang: str | None, max_bytes: int) -> dict[str, Any]:
    """Check files and folders named by an agent (hostile: each must lie inside `roots`; files found in a folder
    whose real path leads out are left out), through the CLI's checking.check_paths, and answer with
    `project_record`. Raises PathRefused, or ConfigError for a broken configuration."""
    if not paths:
        raise PathRefused("name at least one file or folder")
    if len(paths) > MAX_PATHS:
        raise PathRefused(f"{len(paths)} paths, above the limit of {MAX_PATHS}; name their folder instead")
    asked = [resolve_inside(p, roots) for p in paths]
    resolver = ConfigResolver({"language": lang}, None, False)
    found = [str(p) for p in discover(asked, resolver)]
    kept = [p for p in found if resolve_inside_or_none(p, roots) is not None]
    outside = len(found) - len(kept)
    results = check_paths(kept[:MAX_FILES], resolver, lang, "none", max_bytes)
    return project_record([shown_path(p, roots) for p in asked], results, roots, not_checked=kept[MAX_FILES:],
                          outside=outside)


def resolve_inside_or_none(path: str, roots: list[str]) -> str | None:
    try:
        return resolve_inside(path, roots, folders=False)
    except PathRefused:
        return None


def project_record(asked: list[str], results, roots: list[str], not_checked: list[str] = (),
                   outside: int = 0) -> dict[str, Any]:
    """The answer to a `check` of folders or several files: a record per file with findings or blocks not
    analysed (files with neither are only counted), files that could not be read, and what was left out to keep
    the answer within MAX_ANSWER_CHARS (`left_out`: counts and the files to check one by one)."""
    files, errors = [], []
    budget = MAX_ANSWER_CHARS
    left_findings, left_files = 0, []
    for r in results:
        shown = shown_path(r.path, roots)
        if r.error or r.skipped:
            errors.append({"path": shown, "message": r.error or r.skipped})
            continue
        if not r.findings and not r.notes:
            continue
        record = check_record(shown, [], r.notes, r, roots)
        budget -= len(findings_text(record))
        for f in r.findings:
            item = finding_record(shown, f, r, roots)
            cost = len(findings_text({"path": shown, "findings": [item], "not_analysed": []}))
            if budget - cost < 0 and (files or record["findings"]):
                left_findings += 1
                continue
            budget -= cost
            record["findings"].append(item)
        if len(record["findings"]) < len(r.findings):
            record["findings_left_out"] = len(r.findings) - len(record["findings"])
            left_files.append(shown)
        if record["findings"] or record["not_analysed"]:
            files.append(record)
    return {
        "paths": asked,
        "files_checked": sum(1 for r in results if not r.error and not r.skipped),
        "findings": sum(len(r.findings) for r in results),
        "files": files,
        "errors": errors,
        "left_out": {"findings": left_findings, "files": left_files,
                     "not_checked": [shown_path(p, roots) for p in not_checked], "outside": outside},
    }


def project_text(record: dict[str, Any]) -> str:
    """A project record as text: a count, then each file's findings as `findings_text` says them."""
    n, checked = record["findings"], record["files_checked"]
    with_findings = sum(1 for f in record["files"] if f["findings"])
    named = record["paths"][:3] + ([f"{len(record['paths']) - 3} more"] if len(record["paths"]) > 3 else [])
    head = (f"{', '.join(named)}: {n} finding{'s' if n != 1 else ''}"
            f"{f' in {with_findings} file' + ('s' if with_findings != 1 else '') if n else ''}"
            f" ({checked} file{'s' if checked != 1 else ''} checked).")
    lines = [head]
    for file_record in record["files"]:
        lines.append(findings_text(file_record))
    for error in record["errors"]:
        lines.append(f"{error['path']}: {error['message']}")
    left = record["left_out"]
    if left["findings"]:
        lines.append(f"Left out to keep this answer short: {left['findings']} finding{'s' if left['findings'] != 1 else ''} "
                     f"in {', '.join(left['files'])}; check {'that file' if len(left['files']) == 1 else 'those files'} "
                     f"by `path` for all of them.")
    if left["not_checked"]:
        lines.append(f"Not checked: {len(left['not_checked'])} more files (a call checks at most {MAX_FILES}); "
                     f"check their folders separately.")
    if left["outside"]:
        lines.append(f"Not checked: {left['outside']} file{'s' if left['outside'] != 1 else ''} found through a "
                     f"symlink that leads outside the project.")
    return "\n".join(lines)
