"""Findings of the last `gradguard trace` run (`.gradguard/trace.json`), shown as diagnostics.

Each runtime finding marks the lines it is about: the line whose op saved the tensor and the line that
wrote it in place (linked to each other with relatedInformation), the line where torch raised, or for a
backward through a freed graph the failing backward() and the state carried without detach(). A mark
stays while its line's text is what it was when the trace ran; once the user edits that line, the mark
is dropped (the run no longer describes it).

The trace file comes from the repository, so it is untrusted: only regular files inside the workspace
folder are read (trace.json and the source files it names), each with a size cap, never through a
symlink that leads out, never a device or a FIFO; every entry is validated on its own (a bad one is
skipped), duplicates are dropped and the count is capped. `reload_in_background` reads off the event loop.

Texts: trace.json (version 1) carries each finding's message in every language (`i18n`); the marks keep
them all and render in the server's language when diagnostics are made, so a `gradguard trace --lang zh`
run shows English diagnostics in an English editor and Chinese ones in a Chinese editor, never a mix.
"""
from __future__ import annotations

import functools
import json
import os
import threading
from dataclasses import dataclass
from pathlib import Path

from lsprotocol import types
from pygls.uris import from_fs_path

from ..config import DEFAULT_EXCLUDES
from ..explain.files import inside as _inside, read_capped  # shared with `gradguard explain`

SOURCE = "gradguard-trace"
TRACE_FILE = Path(".gradguard") / "trace.json"
MAX_TRACE_BYTES = 16 * 1024 * 1024
MAX_SOURCE_BYTES = 8 * 1024 * 1024
MAX_ENTRIES = 100_000  # entries looked at in one trace.json
MAX_MARKS = 1000  # distinct marks kept from one trace.json
MAX_MARKS_PER_FILE = 200
MAX_TEXT = 2000  # characters of one message
MAX_TRACE_FILES = 32  # trace.json files read in one workspace folder
MAX_FOLDERS = 20_000  # folders looked at for them (a monorepo is cut there; the root's own file comes first)
SKIPPED_FOLDERS = frozenset(DEFAULT_EXCLUDES)
KINDS = {"stale-save", "silent-write", "torch-error", "backward-twice"}
LANGS = ("en", "zh")


@dataclass(frozen=True)
class TraceMark:
    path: str
    line: int  # 0-based
    line_text: str  # the line as it was on disk when the trace result was read
    messages: tuple  # ((lang, message), ...)
    severity: types.DiagnosticSeverity
    other_path: str | None
    other_line: int | None
    other_messages: tuple  # ((lang, message), ...)

    def message(self, lang: str) -> str:
        return _pick(self.messages, lang)

    def other_message(self, lang: str) -> str:
        return _pick(self.other_messages, lang)


def _pick(texts: tuple, lang: str) -> str:
    found = dict(texts)
    return found.get(lang) or found.get("en", "")


# ---------------------------------------------------------------------------------------------
# Reading untrusted files


class _Sources:
    """Lines of the source files that findings name, read once each, only inside the workspace."""

    def __init__(self, root_real: str):
        self.root_real = root_real
        self.cache: dict[str, list[str] | None] = {}
        self.resolved: dict[str, str | None] = {}  # path named by an entry -> its real path inside the root

    def inside(self, path: str) -> str | None:
        """`_inside` once per distinct path of one trace.json (20,000 entries naming one file cost 20,000
        realpath() calls, seconds of the reload)."""
        if path not in self.resolved:
            self.resolved[path] = _inside(self.root_real, path)
        return self.resolved[path]

    def line(self, real: str, line: int) -> str | None:
        if real not in self.cache:
            data = read_capped(real, MAX_SOURCE_BYTES)
            try:
                self.cache[real] = data.decode("utf-8").replace("\r\n", "\n").split("\n") if data is not None else None
            except UnicodeDecodeError:
                self.cache[real] = None
        lines = self.cache[real]
        return lines[line] if lines is not None and 0 <= line < len(lines) else None


# ---------------------------------------------------------------------------------------------
# Validating entries


def _text(value, limit: int = MAX_TEXT) -> str | None:
    return value[:limit] if isinstance(value, str) else None


def _site(value, base: Path, sources: _Sources) -> tuple[str, int] | None:
    """(real path, 0-based line) of a {"file", "line"} object inside the workspace; None otherwise."""
    if not isinstance(value, dict):
        return None
    file, line = value.get("file"), value.get("line")
    if not isinstance(file, str) or not file or len(file) > 4096 or "\x00" in file:
        return None
    if not isinstance(line, int) or isinstance(line, bool) or not 1 <= line <= 10_000_000:
        return None
    path = file if os.path.isabs(file) else str(base / file)
    real = sources.inside(path)
    return (real, line - 1) if real is not None else None


def _messages(finding: dict) -> dict[str, str]:
    """lang -> the finding's one-line message; a trace.json written before `i18n` existed has one message,
    in the language it was written in (Chinese if it holds CJK characters), and none for the other."""
    out = {}
    i18n = finding.get("i18n")
    if isinstance(i18n, dict):
        for lang in LANGS:
            entry = i18n.get(lang)
            if isinstance(entry, dict) and _text(entry.get("message")):
                out[lang] = _text(entry["message"])
    elif _text(finding.get("message")):
        message = _text(finding["message"])
        out["zh" if any("\u4e00" <= ch <= "\u9fff" for ch in message) else "en"] = message
    return out


HEADS = {
    "en": {
        "save": "at runtime: the tensor saved here for {node} was later modified in place",
        "save_silent": "at runtime: the tensor saved here for {node} was later overwritten without a version bump",
        "write": "at runtime: this in-place write ({op}) modified a tensor a live graph saved",
        "write_silent": "at runtime: this write ({op}) overwrote a tensor a live graph saved, without a version bump: the gradient is silently wrong",
        "raised": "at runtime: torch raised here: {title}",
        "backward": "at runtime: this backward() went through a graph that an earlier backward() freed",
        "carry": "at runtime: this assignment carries the graph into the next iteration without .detach()",
        "other_save": "where the tensor was saved for backward",
        "other_write": "the in-place write",
        "other_backward": "the backward() that failed",
        "other_carry": "the state carried without .detach()",
        "sep": ". ",
    },
    "zh": {
        "save": "运行时：这里为 {node} 保存的张量之后被原地修改",
        "save_silent": "运行时：这里为 {node} 保存的张量之后被改写，版本计数器没有增加",
        "write": "运行时：这里的原地写入（{op}）修改了计算图仍需要的张量",
        "write_silent": "运行时：这里的写入（{op}）改写了计算图仍需要的张量，版本没有增加：梯度会悄悄算错",
        "raised": "运行时：torch 在这里报错：{title}",
        "backward": "运行时：这次 backward() 经过了一个已被之前的 backward() 释放的计算图",
        "carry": "运行时：这个赋值没有分离（`detach()`）就把计算图带进了下一轮迭代",
        "other_save": "张量在这里被保存用于反向传播",
        "other_write": "原地写入发生在这里",
        "other_backward": "失败的 backward()",
        "other_carry": "没有分离就传递的状态",
        "sep": "。",
    },
}


@functools.lru_cache(maxsize=256)
def _title(error: str, lang: str) -> str:
    try:
        from ..explain import catalog
    except Exception:  # pragma: no cover - the catalog ships with the server
        return error
    for kind in catalog.KINDS:
        if kind.id == error:
            return kind.title[lang]
    return error


def _short(value, limit: int = 200) -> str:
    return value[:limit] if isinstance(value, str) else ""


def marks_of(finding, base: Path, root_real: str, sources: _Sources) -> list[TraceMark]:
    """The marks of one trace.json entry; [] for a malformed entry or one about files outside the workspace."""
    if not isinstance(finding, dict) or finding.get("kind", "stale-save") not in KINDS:
        return []
    kind = finding.get("kind", "stale-save")
    severity = types.DiagnosticSeverity.Warning if finding.get("severity") == "warning" else types.DiagnosticSeverity.Error
    save, write = finding.get("save"), finding.get("write")
    node = _short(save.get("node")) if isinstance(save, dict) else ""
    op = _short(write.get("op")) if isinstance(write, dict) else ""
    roles: list[tuple[str, str, str]] = []  # (role, head key, other key)
    if kind == "torch-error":
        roles = [("raised", "raised", "")]
    elif kind == "backward-twice":
        roles = [("backward", "backward", "other_carry"), ("carry", "carry", "other_backward")]
    else:
        silent = "_silent" if kind == "silent-write" else ""
        roles = [("save", "save" + silent, "other_write"), ("write", "write" + silent, "other_save")]
    sites = {role: _site(finding.get(role), base, sources) for role, _, _ in roles}
    messages = _messages(finding)
    title_error = _short(finding.get("error"), 100)
    marks = []
    for role, head_key, other_key in roles:
        site = sites[role]
        if site is None:
            continue
        text = sources.line(site[0], site[1])
        if text is None:
            continue
        other_role = next((r for r, _, _ in roles if r != role and sites[r] is not None), None)
        other = sites[other_role] if other_role else None
        texts, other_texts = [], []
        for lang in LANGS:
            heads = HEADS[lang]
            head = heads[head_key].format(node=node or "?", op=op or "?", title=_title(title_error, lang))
            body = messages.get(lang)
            texts.append((lang, head + (heads["sep"] + body if body else "")))
            if other_key:
                other_texts.append((lang, heads[other_key]))
        marks.append(TraceMark(site[0], site[1], text, tuple(texts), severity,
                               other[0] if other else None, other[1] if other else None, tuple(other_texts)))
    return marks


def read_trace_file(trace_json: Path, lang: str = "en", root: str | None = None) -> list[TraceMark]:
    """The marks of one trace.json inside workspace folder `root` (default: the folder holding
    `.gradguard/`); an unreadable, oversized, foreign or out-of-workspace file gives none."""
    base = Path(trace_json).parent.parent
    try:
        root_real = os.path.realpath(root if root is not None else base)
    except (OSError, ValueError):
        return []
    real = _inside(root_real, str(trace_json))
    if real is None:
        return []
    data = read_capped(real, MAX_TRACE_BYTES)
    if data is None:
        return []
    try:
        doc = json.loads(data.decode("utf-8"))
    except (ValueError, UnicodeDecodeError, RecursionError):
        return []
    if not isinstance(doc, dict) or doc.get("version") != 1 or not isinstance(doc.get("findings"), list):
        return []
    sources = _Sources(root_real)
    marks: list[TraceMark] = []
    seen: set[tuple] = set()
    per_file: dict[str, int] = {}
    for finding in doc["findings"][:MAX_ENTRIES]:
        if len(marks) >= MAX_MARKS:
            break
        try:
            found = marks_of(finding, base, root_real, sources)
        except Exception:  # one odd entry never costs the others
            continue
        for mark in found:
            key = (mark.path, mark.line, mark.messages)
            if key in seen or per_file.get(mark.path, 0) >= MAX_MARKS_PER_FILE:
                continue
            seen.add(key)
            per_file[mark.path] = per_file.get(mark.path, 0) + 1
            marks.append(mark)
    return marks


def trace_files(root: str) -> list[Path]:
    """Every `.gradguard/trace.json` under the workspace folder `root`: `cd simclr && gradguard trace train.py`
    writes `simclr/.gradguard/trace.json`, which the editor shows too. Symlinked folders, hidden folders and
    the default excludes (.venv, node_modules, ...) are not entered; the walk stops at MAX_FOLDERS folders and
    MAX_TRACE_FILES files."""
    found: list[Path] = []
    visited = 0
    for folder, dirs, _files in os.walk(root):  # symlinks to folders are not followed
        visited += 1
        candidate = Path(folder) / TRACE_FILE
        if candidate.is_file():
            found.append(candidate)
        if visited >= MAX_FOLDERS or len(found) >= MAX_TRACE_FILES:
            break
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in SKIPPED_FOLDERS)
    return found


class TraceResults:
    """The trace marks of every workspace folder (from each trace.json under it), reloaded when one changes."""

    def __init__(self) -> None:
        self.marks: dict[str, list[TraceMark]] = {}  # file path -> marks
        self.lang = "en"
        self._lock = threading.Lock()
        self._generation = 0

    def reload(self, roots: list[str], lang: str = "en") -> None:
        """Read every root's trace.json now (blocking: see reload_in_background)."""
        self._install(self._read(roots), lang, None)

    def reload_in_background(self, roots: list[str], lang: str = "en", done=None) -> threading.Thread:
        """Read the trace files on a daemon thread (a slow disk or a hostile file never blocks the event
        loop); `done()` is called on that thread after the new marks are installed (a newer reload wins)."""
        with self._lock:
            self._generation += 1
            generation = self._generation

        def work() -> None:
            try:
                marks = self._read(roots)
            except Exception:
                marks = {}
            if self._install(marks, lang, generation) and done is not None:
                done()

        thread = threading.Thread(target=work, name="gradguard-trace-reload", daemon=True)
        thread.start()
        return thread

    def _read(self, roots: list[str]) -> dict[str, list[TraceMark]]:
        marks: dict[str, list[TraceMark]] = {}
        for root in roots:
            for trace_json in trace_files(root):
                for mark in read_trace_file(trace_json, root=root):
                    marks.setdefault(os.path.normpath(mark.path), []).append(mark)
        return marks

    def _install(self, marks, lang: str, generation: int | None) -> bool:
        with self._lock:
            if generation is not None and generation != self._generation:
                return False
            self.marks = marks
            self.lang = lang if lang in LANGS else "en"
            return True

    def diagnostics(self, path: str, lines: list[str], to_client_col, lang: str | None = None) -> list[types.Diagnostic]:
        """Diagnostics for a document whose current lines are `lines`; marks on edited lines are left out."""
        lang = lang if lang in LANGS else self.lang
        out = []
        try:
            real = os.path.realpath(path)
        except (OSError, ValueError):
            real = path
        marks = self.marks.get(os.path.normpath(real)) or self.marks.get(os.path.normpath(path), [])
        for mark in marks:
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
                    mark.other_message(lang))]
            out.append(types.Diagnostic(rng, mark.message(lang), severity=mark.severity, source=SOURCE,
                                        related_information=related))
        return out
