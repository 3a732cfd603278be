"""Findings of the last `gradguard trace` run (`.gradguard/trace.json`), shown as diagnostics.

Each runtime finding marks two lines: the line whose op saved the tensor and the line that wrote it in
place, linked to each other with relatedInformation. A mark stays while its line's text is what it was
when the trace ran; once the user edits that line, the mark is dropped (the run no longer describes it).
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from lsprotocol import types
from pygls.uris import from_fs_path

SOURCE = "gradguard-trace"
TRACE_FILE = Path(".gradguard") / "trace.json"


@dataclass(frozen=True)
class TraceMark:
    path: str
    line: int  # 0-based
    line_text: str  # the line as it was on disk when the trace result was read
    message: str
    severity: types.DiagnosticSeverity
    other_path: str | None
    other_line: int | None
    other_message: str


def _line_of(path: str, line: int, cache: dict[str, list[str]]) -> str | None:
    if path not in cache:
        try:
            cache[path] = Path(path).read_text(encoding="utf-8").replace("\r\n", "\n").split("\n")
        except (OSError, UnicodeDecodeError):
            cache[path] = []
    lines = cache[path]
    return lines[line] if 0 <= line < len(lines) else None


def read_trace_file(trace_json: Path, lang: str = "en") -> list[TraceMark]:
    """The marks of one trace.json; an unreadable or foreign file gives none."""
    try:
        data = json.loads(trace_json.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    if not isinstance(data, dict) or data.get("version") != 1 or not isinstance(data.get("findings"), list):
        return []
    base = trace_json.parent.parent
    files: dict[str, list[str]] = {}
    marks: list[TraceMark] = []
    zh = lang == "zh"
    for finding in data["findings"]:
        if not isinstance(finding, dict):
            continue
        save, write = finding.get("save") or {}, finding.get("write") or {}
        severity = types.DiagnosticSeverity.Error if finding.get("severity", "error") == "error" else types.DiagnosticSeverity.Warning
        message = str(finding.get("message", ""))
        node = save.get("node") or ""
        sites = []
        if save.get("file") and isinstance(save.get("line"), int):
            sites.append(("save", str(base / save["file"]) if not os.path.isabs(save["file"]) else save["file"], save["line"] - 1))
        if write.get("file") and isinstance(write.get("line"), int):
            sites.append(("write", str(base / write["file"]) if not os.path.isabs(write["file"]) else write["file"], write["line"] - 1))
        for role, path, line in sites:
            text = _line_of(path, line, files)
            if text is None:
                continue
            other = next(((p, ln) for r, p, ln in sites if r != role), (None, None))
            if role == "save":
                head = (f"运行时：这里为 {node} 保存的张量之后被原地修改" if zh else
                        f"at runtime: the tensor saved here for {node} was later modified in place")
                other_msg = "原地写入发生在这里" if zh else "the in-place write"
            else:
                head = (f"运行时：这里的原地写入（{write.get('op', '')}）修改了计算图仍需要的张量" if zh else
                        f"at runtime: this in-place write ({write.get('op', '')}) modified a tensor a live graph saved")
                other_msg = "张量在这里被保存用于反向传播" if zh else "where the tensor was saved for backward"
            marks.append(TraceMark(path, line, text, f"{head}. {message}", severity, other[0], other[1], other_msg))
    return marks


class TraceResults:
    """The trace marks of every workspace folder, reloaded when a trace.json changes."""

    def __init__(self) -> None:
        self.marks: dict[str, list[TraceMark]] = {}  # file path -> marks

    def reload(self, roots: list[str], lang: str = "en") -> None:
        marks: dict[str, list[TraceMark]] = {}
        for root in roots:
            for mark in read_trace_file(Path(root) / TRACE_FILE, lang):
                marks.setdefault(os.path.normpath(mark.path), []).append(mark)
        self.marks = marks

    def diagnostics(self, path: str, lines: list[str], to_client_col) -> list[types.Diagnostic]:
        """Diagnostics for a document whose current lines are `lines`; marks on edited lines are left out."""
        out = []
        for mark in self.marks.get(os.path.normpath(path), []):
            if not (0 <= mark.line < len(lines)) or lines[mark.line] != mark.line_text:
                continue
            text = lines[mark.line]
            start = len(text) - len(text.lstrip())
            rng = types.Range(types.Position(mark.line, to_client_col(text, start)),
                              types.Position(mark.line, to_client_col(text, len(text.rstrip()))))
            related = None
            if mark.other_path is not None and mark.other_line is not None:
                related = [types.DiagnosticRelatedInformation(
                    types.Location(from_fs_path(mark.other_path) or mark.other_path,
                                   types.Range(types.Position(mark.other_line, 0), types.Position(mark.other_line, 0))),
                    mark.other_message)]
            out.append(types.Diagnostic(rng, mark.message, severity=mark.severity, source=SOURCE,
                                        related_information=related))
        return out
