"""The `gradguard` command: check, rule, server, trace, explain."""
from __future__ import annotations

import argparse
import codecs
import difflib
import fnmatch
import io
import json
import os
import re
import stat
import sys
import tempfile
import tokenize
from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path
from urllib.parse import quote

from . import __version__
from .cache import content_hash
from .config import DEFAULT_EXCLUDES, Config, ConfigError, ConfigResolver
from .findings import SAFE, Edit, Finding, Fix, ParseNote
from .i18n import default_language, locale_language  # `language = "auto"`: the locale
from .notebook import CellMap, Notebook, NotebookError
from .source import Span

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2
DEFAULT_MAX_BYTES = 10 * 1024 * 1024
PYTHON_SUFFIXES = (".py", ".pyi")
NOTEBOOK_SUFFIX = ".ipynb"


# ---------------------------------------------------------------- reading files
class SourceError(ValueError):
    """A file that cannot be read as Python source; the message says why ("...; not analysed")."""


@dataclass
class Decoded:
    text: str  # line endings as in the file
    encoding: str = "utf-8"
    bom: bool = False


def decode_python(data: bytes) -> Decoded:
    """Source bytes as text, per PEP 263: a UTF-8 BOM, a coding cookie on line 1 or 2, else UTF-8."""
    bom = data.startswith(codecs.BOM_UTF8)
    body = data[3:] if bom else data
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as exc:
        if "invalid or missing encoding declaration" not in str(exc):
            # an unknown codec in the cookie, or a cookie that contradicts the BOM
            raise SourceError(f"{exc}; not analysed") from None
        encoding = "utf-8"  # no cookie and not UTF-8: the decode below says where
    if encoding == "utf-8-sig":
        encoding = "utf-8"
    try:
        text = body.decode(encoding)
    except UnicodeDecodeError as exc:
        offset = exc.start + (3 if bom else 0)
        name = "UTF-8" if encoding == "utf-8" else encoding
        raise SourceError(f"not {name} (byte 0x{body[exc.start]:02x} at offset {offset}); not analysed") from None
    except LookupError:
        raise SourceError(f"unknown encoding {encoding!r}; not analysed") from None
    return Decoded(text, encoding, bom)


def encode_python(text: str, decoded: Decoded) -> bytes:
    return (codecs.BOM_UTF8 if decoded.bom else b"") + text.encode(decoded.encoding)


def read_regular(path: str, max_bytes: int) -> bytes:
    """A regular file's bytes, at most `max_bytes` (devices, FIFOs and /proc links are refused unread)."""
    try:
        st = os.stat(path)
    except OSError as exc:
        raise SourceError(f"cannot read: {exc.strerror or exc}") from None
    if not stat.S_ISREG(st.st_mode):
        raise SourceError("not a regular file; not analysed")
    if st.st_size > max_bytes:
        raise SourceError(f"file is {st.st_size} bytes, above the limit of {max_bytes} (--max-file-bytes); not analysed")
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        raise SourceError(f"cannot read: {exc.strerror or exc}") from None
    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):  # swapped since the stat
            raise SourceError("not a regular file; not analysed")
        chunks, size = [], 0
        while size <= max_bytes:  # read to the end, but never more than the limit (a file may grow meanwhile)
            chunk = fh.read(min(max_bytes + 1 - size, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        data = b"".join(chunks)
    if len(data) > max_bytes:
        raise SourceError(f"file is above the limit of {max_bytes} bytes (--max-file-bytes); not analysed")
    return data


def _is_regular(path: str) -> bool:
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        return False


# ---------------------------------------------------------------- file discovery
def _gitignore_patterns(folder: Path) -> list[str]:
    path = folder / ".gitignore"
    if not _is_regular(str(path)):  # a symlink to /dev/zero or a FIFO is never read
        return []
    try:
        lines = read_regular(str(path), 1024 * 1024).decode("utf-8", errors="replace").splitlines()
    except SourceError:
        return []
    return [line.strip() for line in lines if line.strip() and not line.startswith("#") and not line.startswith("!")]


def _ignored(rel: str, name: str, patterns: list[str]) -> bool:
    for pattern in patterns:
        p = pattern.rstrip("/")
        if p.startswith("/"):
            if fnmatch.fnmatch(rel, p[1:]):
                return True
        elif fnmatch.fnmatch(name, p) or fnmatch.fnmatch(rel, p) or fnmatch.fnmatch(rel, "*/" + p):
            return True
    return False


def _config_excluded(path: Path, config: Config) -> bool:
    """Whether `exclude` of the file's own config matches it (patterns are relative to that config's folder)."""
    if not config.exclude:
        return False
    rel = path.as_posix()
    if config.root:
        try:
            rel = Path(os.path.abspath(path)).relative_to(Path(config.root).resolve()).as_posix()
        except ValueError:
            pass
    parts = rel.split("/")
    return any(_ignored("/".join(parts[: i + 1]), parts[i], list(config.exclude)) for i in range(len(parts)))


def is_checked_name(name: str, notebooks: bool = True) -> bool:
    return name.endswith(PYTHON_SUFFIXES) or (notebooks and name.endswith(NOTEBOOK_SUFFIX))


def discover(paths: list[str], resolver: ConfigResolver, default_excludes: bool = True,
             force_exclude: bool = False) -> list[Path]:
    """Python files and notebooks under `paths`, in a stable order.

    Explicit files are always included (unless `force_exclude` and their config excludes them); missing
    paths are included too and reported as unreadable. Inside folders only regular files are taken.
    """
    found: list[Path] = []
    names = set(DEFAULT_EXCLUDES) if default_excludes else set()
    for raw in paths:
        root = Path(raw)
        if not root.is_dir():
            if force_exclude and root.exists():
                # Default-excluded folder names count from the working directory down (pre-commit runs at
                # the repository root), never in the folders above it.
                rel = os.path.relpath(os.path.abspath(root))
                parts = Path(rel if not rel.startswith("..") else raw).parts[:-1]
                if _config_excluded(root, resolver.for_path(root)) or any(p in names for p in parts):
                    continue
            found.append(root)
            continue
        if force_exclude and _config_excluded(root, resolver.for_path(root)) and raw not in (".", "./"):
            continue
        patterns = _gitignore_patterns(root) if default_excludes else []
        for folder, dirs, files in os.walk(root):
            folder_path = Path(folder)
            rel_folder = os.path.relpath(folder, root)
            local = patterns + (_gitignore_patterns(folder_path) if default_excludes and folder_path != root else [])
            config = resolver.for_path(folder_path)

            def keep(d: str) -> bool:
                if d == ".git" or (default_excludes and (d in names or d.startswith("."))):
                    return False
                if _ignored(os.path.normpath(os.path.join(rel_folder, d)), d, local):
                    return False
                return not _config_excluded(folder_path / d, resolver.for_path(folder_path / d))

            dirs[:] = sorted(d for d in dirs if keep(d))
            for f in sorted(files):
                if not is_checked_name(f):
                    continue
                path = folder_path / f
                if _ignored(os.path.normpath(os.path.join(rel_folder, f)), f, local) or _config_excluded(path, config):
                    continue
                try:
                    if not stat.S_ISREG(os.stat(path).st_mode):  # a FIFO, or a symlink to a device or /proc
                        continue
                except OSError:
                    pass  # a dangling or looping link: reported as unreadable
                found.append(path)
    return found


# ---------------------------------------------------------------- checking
@dataclass
class FileResult:
    path: str
    findings: list[Finding] = field(default_factory=list)
    notes: list[ParseNote] = field(default_factory=list)
    error: str = ""  # could not read or decode
    skipped: str = ""  # deliberately not checked (a notebook in another language)
    fixed_text: str | None = None  # after --fix (for a notebook: the joined program)
    original_text: str = ""  # the analysed text (for a notebook: the joined program)
    applied: int = 0
    noqa_added: int = 0
    applied_codes: Counter = field(default_factory=Counter)
    lines: int = 0
    suppressed: list[Finding] = field(default_factory=list)
    cells: CellMap | None = None  # a notebook's cell layout
    decoded: Decoded | None = None
    notebook: Notebook | None = None
    deps: dict = field(default_factory=dict)  # files read for imported classes -> their content hash
    digest: str = ""  # content hash of the bytes read (the cache key)
    cached: bool = False

    def where(self, line: int) -> tuple[int | None, int]:
        """(cell number or None, line) as users count them, for a 0-based analysed line."""
        if self.cells is None:
            return None, line
        return self.cells.locate(line)


_ENGINE = None


def _engine():
    global _ENGINE
    if _ENGINE is None:
        from .engine import Engine

        class RecordingEngine(Engine):
            """Remembers which project files a check read for imported classes (the cache's dependencies)."""

            read: set

            def _classes_of(self, path):
                self.read.add(str(path))
                return super()._classes_of(path)

            def import_candidates(self, importer, qualified):
                # Every candidate the engine looks at, found or not: a model.py created later must invalidate
                # the importer's entry too.
                for candidate in super().import_candidates(importer, qualified):
                    self.read.add(str(candidate))
                    yield candidate

        _ENGINE = RecordingEngine(editor=False)
        _ENGINE.read = set()
    return _ENGINE


def _raw_line_starts(text: str) -> list[int]:
    starts = [0]
    starts.extend(m.end() for m in re.finditer(r"\r\n|\r|\n", text))
    return starts


def apply_edits(text: str, items) -> tuple[str, list]:
    """Apply whole fixes without overlaps, last first; keeps every line ending outside the edits.

    `items` are (tag, [(start_line, start_col, end_line, end_col, new_text), ...]); positions count lines
    ended by \\n, \\r\\n or \\r, as the engine does. A new text's `\\n` takes the line ending of the line it
    lands on. Returns the new text and the tags applied.
    """
    starts = _raw_line_starts(text)

    def offset(line: int, col: int) -> int:
        line = max(0, min(line, len(starts) - 1))
        end = starts[line + 1] if line + 1 < len(starts) else len(text)
        content_end = end
        while content_end > starts[line] and text[content_end - 1] in "\r\n":
            content_end -= 1
        return min(starts[line] + col, content_end if line + 1 < len(starts) else len(text))

    def ending(line: int) -> str:
        if line + 1 >= len(starts):
            line = len(starts) - 2
        if line < 0:
            return "\n"
        seg = text[starts[line]:starts[line + 1]]
        return "\r\n" if seg.endswith("\r\n") else seg[-1:] or "\n"

    chosen, taken, applied = [], [], []
    for tag, edits in items:
        ranges = [(offset(sl, sc), offset(el, ec)) for sl, sc, el, ec, _ in edits]
        if any((a < tb and ta < b) or a == ta for a, b in ranges for ta, tb in taken):
            continue
        taken.extend(ranges)
        nl = [ending(sl) for sl, _sc, _el, _ec, _new in edits]
        chosen.extend(((r, new.replace("\n", n) if n != "\n" else new) for r, (*_, new), n in zip(ranges, edits, nl)))
        applied.append(tag)
    for (start, end), new in sorted(chosen, key=lambda item: item[0], reverse=True):
        text = text[:start] + new + text[end:]
    return text, applied


def _edits_of(f: Finding):
    return [(e.span.start_line, e.span.start_col, e.span.end_line, e.span.end_col, e.new_text) for e in f.fix.edits]


def apply_fixes(text: str, findings: list[Finding]) -> tuple[str, int]:
    """Apply non-overlapping fixes (whole fixes only), last first so offsets stay valid."""
    ordered = sorted(findings, key=lambda f: (f.span.start_line, f.span.start_col))
    text, applied = apply_edits(text, [(f, _edits_of(f)) for f in ordered])
    return text, len(applied)


def _run_engine(text: str, path: str, config: Config, lang: str, deps: set):
    engine = _engine()
    engine.read = set()
    report = engine.check(text, path, config, lang)
    deps |= engine.read
    return report


def check_one(path: str, text: str | None, config: Config, lang: str, fix_mode: str, max_bytes: int,
              add_noqa: bool = False, data: bytes | None = None) -> FileResult:
    """Check one file (a .py file or a notebook); with fix_mode 'safe' or 'unsafe', also compute the fixed text.

    `text` is given for code that is not on disk (tests, stdin); else `data` (stdin bytes) or the file is read.
    """
    result = FileResult(path)
    try:
        if text is None:
            if data is None:
                data = read_regular(path, max_bytes)
            result.digest = content_hash(data)
            if path.endswith(NOTEBOOK_SUFFIX):
                return _check_notebook(result, data, config, lang, fix_mode, add_noqa)
            result.decoded = decode_python(data)
            text = result.decoded.text
        else:
            result.decoded = Decoded(text)
    except (SourceError, NotebookError) as exc:
        result.error = str(exc)
        return result
    if "\x00" in text:
        result.error = "contains NUL bytes (binary?); not analysed"
        return result
    result.original_text = text
    result.lines = text.count("\n") + text.count("\r") - text.count("\r\n") + 1  # = len(_raw_line_starts(text))
    deps: set = set()
    report = _run_engine(text, path, config, lang, deps)
    _take(result, report)
    if fix_mode != "none" or add_noqa:
        current = text
        for _ in range(5):  # fixes can expose further fixes; stop when nothing applies
            fixable = _fixable(report.findings, fix_mode)
            if not fixable:
                break
            current, applied = apply_edits(current, [(f, _edits_of(f)) for f in fixable])
            if not applied:
                break
            _count(result, applied)
            report = _run_engine(current, path, config, lang, deps)
        if add_noqa and report.findings:
            current, added = apply_edits(current, _noqa_edits(current, report.findings))
            result.noqa_added = len(added)
            if added:
                report = _run_engine(current, path, config, lang, deps)
        result.fixed_text = current
        _take(result, report)
    result.deps = _hash_files(deps)
    return result


def _take(result: FileResult, report) -> None:
    result.findings = report.findings
    result.notes = report.parse_notes
    result.suppressed = list(getattr(report, "suppressed", []))


def _fixable(findings, fix_mode: str) -> list[Finding]:
    if fix_mode == "none":
        return []
    ordered = sorted(findings, key=lambda f: (f.span.start_line, f.span.start_col))
    return [f for f in ordered if f.fix and (fix_mode == "unsafe" or f.fix.applicability == SAFE)]


def _count(result: FileResult, applied: list[Finding]) -> None:
    result.applied += len(applied)
    result.applied_codes.update(f.code for f in applied)


def _check_notebook(result: FileResult, data: bytes, config: Config, lang: str, fix_mode: str,
                    add_noqa: bool) -> FileResult:
    try:
        raw = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise NotebookError(f"notebook is not UTF-8 (offset {exc.start}); not analysed") from None
    nb = Notebook.from_text(raw)
    if nb.language != "python":
        result.skipped = f"a notebook in {nb.language}, not Python; skipped"
        return result
    text, cmap = nb.program()
    result.notebook, result.cells, result.original_text = nb, cmap, text
    result.lines = text.count("\n")
    deps: set = set()
    report = _run_engine(text, result.path, config, lang, deps)
    _take(result, report)
    if fix_mode != "none" or add_noqa:
        for _ in range(5):
            fixable = _fixable(report.findings, fix_mode)
            if not fixable:
                break
            applied = nb.apply(fixable, cmap)
            if not applied:
                break
            _count(result, applied)
            text, cmap = nb.program()
            report = _run_engine(text, result.path, config, lang, deps)
        if add_noqa and report.findings:
            added = nb.apply(_noqa_findings(text, report.findings), cmap)
            result.noqa_added = len(added)
            if added:
                text, cmap = nb.program()
                report = _run_engine(text, result.path, config, lang, deps)
        result.cells, result.fixed_text = cmap, text
        _take(result, report)
    _say_cell_lines(result, cmap, lang)
    result.deps = _hash_files(deps)
    return result


def _say_cell_lines(result: FileResult, cmap: CellMap, lang: str) -> None:
    """The engine numbers the lines of the joined program; in a notebook, messages name the cell and its line."""
    result.findings = cmap.relabel_findings(result.findings, lang)
    result.notes = [replace(n, message=cmap.relabel(n.message, lang)) for n in result.notes]


def _hash_files(paths) -> dict:
    out = {}
    for p in sorted(paths):
        try:
            out[p] = content_hash(read_regular(p, DEFAULT_MAX_BYTES))
        except SourceError:
            out[p] = None
    return out


# ---------------------------------------------------------------- --add-noqa
def _unsafe_comment_lines(text: str) -> set[int]:
    """0-based lines whose end is inside a string or a backslash continuation: no comment can go there."""
    bad: set[int] = set()
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.start[0] != tok.end[0] and tok.type not in (tokenize.NL, tokenize.NEWLINE):
                bad.update(range(tok.start[0] - 1, tok.end[0] - 1))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        pass
    lines = re.split(r"\r\n|\r|\n", text)
    bad.update(i for i, ln in enumerate(lines) if ln.endswith("\\"))
    return bad


def _noqa_lines(text: str, findings: list[Finding]) -> dict[int, str]:
    """Line -> the new content with `# noqa: CODE` for each finding's first line."""
    from .noqa import add_noqa

    lines = re.split(r"\r\n|\r|\n", text)
    bad = _unsafe_comment_lines(text)
    out: dict[int, str] = {}
    for f in sorted(findings, key=lambda f: (f.span.start_line, f.code)):
        line = f.span.start_line
        if line in bad or line >= len(lines):
            continue
        out[line] = add_noqa(out.get(line, lines[line]), f.code)
    return {ln: new for ln, new in out.items() if new != lines[ln]}


def _noqa_edits(text: str, findings: list[Finding]):
    lines = re.split(r"\r\n|\r|\n", text)
    return [(ln, [(ln, 0, ln, len(lines[ln]), new)]) for ln, new in _noqa_lines(text, findings).items()]


def _noqa_findings(text: str, findings: list[Finding]) -> list[Finding]:
    """`--add-noqa` edits for a notebook, shaped as findings with fixes (so they map to cells)."""
    lines = text.split("\n")
    return [Finding("noqa", "noqa", "", Span(ln, 0, ln, len(lines[ln])),
                    fix=Fix(SAFE, "add noqa", (Edit(Span(ln, 0, ln, len(lines[ln])), new),)))
            for ln, new in _noqa_lines(text, findings).items()]


# ---------------------------------------------------------------- writing
def write_atomically(path: str, text: str, expected_original: str, decoded: Decoded | None = None) -> str | None:
    """Replace the file's content via a temporary file and rename; None on success, else the reason.

    Writes through symlinks to the real file, keeps its mode, encoding and BOM (the text carries its own
    line endings), refuses read-only files and files that changed since they were read, and never leaves
    a truncated file or a temporary file behind (also on Ctrl-C).
    """
    target = Path(os.path.realpath(path))
    try:
        raw = read_regular(str(target), 1 << 40)
        mode = target.stat().st_mode
    except (OSError, SourceError) as exc:
        return f"cannot re-read before writing: {exc}"
    try:
        if path.endswith(NOTEBOOK_SUFFIX):
            current = raw.decode("utf-8-sig")
            decoded = decoded or Decoded("", "utf-8", raw.startswith(codecs.BOM_UTF8))
        else:
            now = decode_python(raw)
            current, decoded = now.text, decoded or now
    except (SourceError, UnicodeDecodeError) as exc:
        return f"cannot re-read before writing: {exc}"
    if current.replace("\r\n", "\n") != expected_original.replace("\r\n", "\n"):
        return "file changed on disk while gradguard was checking it; not fixed"
    if not mode & 0o222:
        return "file is read-only; not fixed"
    try:
        data = encode_python(text, decoded)
    except UnicodeEncodeError:
        return f"the fixed text cannot be written in the file's encoding ({decoded.encoding}); not fixed"
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".gradguard-tmp", dir=str(target.parent))
    except OSError as exc:
        return f"cannot write: {exc.strerror or exc}"
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode & 0o7777)
        os.replace(tmp, target)
    except BaseException as exc:  # OSError, or Ctrl-C mid-write: the original stays, the temporary goes
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if not isinstance(exc, OSError):
            raise
        return f"cannot write: {exc.strerror or exc}"
    return None


def _check_worker(args):
    path, config, lang, fix_mode, max_bytes, add_noqa = args
    try:
        return check_one(path, None, config, lang, fix_mode, max_bytes, add_noqa)
    except Exception as exc:  # one file's internal error must not end the run
        import traceback

        where = traceback.extract_tb(exc.__traceback__)[-1]
        return FileResult(path, error=f"internal error ({type(exc).__name__}: {exc} at "
                                      f"{Path(where.filename).name}:{where.lineno}); please report it")


# ---------------------------------------------------------------- unused noqa
@dataclass(frozen=True)
class UnusedNoqa:
    line: int  # 0-based analysed line
    col: int
    codes: tuple[str, ...]  # the codes that suppressed nothing (empty: the whole directive)
    directive: str


def unused_noqa(result: FileResult, config: Config) -> list[UnusedNoqa]:
    """gradguard directives (`# noqa: GG...`, `# gradguard: ignore[...]`, `# gradguard: noqa`) that hide nothing.

    A bare `# noqa` is left alone: it may be meant for another tool. Codes of rules that are off for the
    file are not reported either (the comment may be for a configuration that turns them on).
    """
    from .noqa import directives

    text = result.fixed_text if result.fixed_text is not None else result.original_text
    by_line: dict[int, set[str]] = {}
    for f in result.suppressed:
        by_line.setdefault(f.span.start_line, set()).add(f.code)
    all_codes = {f.code for f in result.suppressed}
    out = []
    for d in directives(text):
        used = all_codes if d.file_level else by_line.get(d.line, set())
        if d.codes is None:
            if d.kind != "noqa" and not used:
                out.append(UnusedNoqa(d.line, d.col, (), d.text))
            continue
        codes = tuple(c for c in d.codes if c.startswith("GG") and c not in used
                      and (not _is_rule(c) or config.is_enabled(c, result.path)))
        if codes:
            out.append(UnusedNoqa(d.line, d.col, codes, d.text))
    return out


def _is_rule(code: str) -> bool:
    from .rules import get_rule

    return get_rule(code) is not None


# ---------------------------------------------------------------- output
def _loc(span: Span, result: FileResult | None = None, end: bool = False) -> dict:
    line, col = (span.end_line, span.end_col) if end else (span.start_line, span.start_col)
    if result is not None and result.cells is not None:
        line = result.where(line)[1]
    return {"row": line + 1, "column": col + 1}


# Equal to gradguard.rules.DOCS_URL (a test checks): a cached run never imports the rules (nor libcst).
DOCS_URL = ""  # no website: the docs are `gradguard rule CODE` and the editor's rule-docs command


def _in_cell(item: dict, span: Span, result: FileResult | None) -> dict:
    """A related place or an edit of a notebook names its own cell (it may be another cell than the finding's)."""
    if result is not None and result.cells is not None:
        item["cell"] = result.where(span.start_line)[0]
    return item


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
        "related": [_in_cell({"message": r.message, "location": _loc(r.span, result),
                              "end_location": _loc(r.span, result, end=True)}, r.span, result) for r in f.related],
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


def _color(enabled: bool):
    def paint(text: str, code: str) -> str:
        return f"\x1b[{code}m{text}\x1b[0m" if enabled else text
    return paint


def _place(r: FileResult, line: int, col: int) -> str:
    """`path:3:5`, or `nb.ipynb:cell 2:1:5` in a notebook."""
    cell, local = r.where(line)
    where = f"cell {cell}:" if cell is not None else ""
    return f"{where}{local + 1}:{col + 1}"


def format_text(results: list[FileResult], concise: bool, color: bool, lang: str,
                unused: dict | None = None) -> str:
    paint = _color(color)
    out: list[str] = []
    for r in results:
        text = r.fixed_text if r.fixed_text is not None else r.original_text
        lines = re.split(r"\r\n|\r|\n", text)
        for note in r.notes:
            out.append(f"{r.path}:{_place(r, note.span.start_line, note.span.start_col)}: "
                       f"{paint('未分析' if lang == 'zh' else 'parse', '33')} "
                       f"{note.message}")
        for f in r.findings:
            head = f"{paint(r.path, '1')}:{_place(r, f.span.start_line, f.span.start_col)}: {paint(f.code, '31;1')} {f.message}"
            out.append(head)
            if concise:
                continue
            width = len(str(r.where(f.span.end_line)[1] + 1))
            for ln in range(f.span.start_line, min(f.span.end_line, f.span.start_line + 3) + 1):
                line_text = lines[ln] if ln < len(lines) else ""
                out.append(f"  {str(r.where(ln)[1] + 1).rjust(width)} | {line_text}")
                if ln == f.span.start_line:
                    end = f.span.end_col if f.span.end_line == ln else len(line_text)
                    out.append(f"  {' ' * width} | {' ' * f.span.start_col}{paint('^' * max(1, end - f.span.start_col), '31')}")
            note, line_word = ("注", "第 {} 行") if lang == "zh" else ("note", "line {}")
            for rel in f.related:
                cell, local = r.where(rel.span.start_line)
                place = line_word.format(local + 1)
                if cell is not None:
                    place = (f"第 {cell} 个单元格" if lang == "zh" else f"cell {cell}, ") + place
                out.append(f"  {' ' * width} = {paint(note, '36')}: {place}: {rel.message}")
            if f.explanation:
                label = "why" if lang != "zh" else "原因"
                out.append(f"  {' ' * width} = {paint(label, '36')}:")
                out.extend(f"  {' ' * width}     {line}" for line in f.explanation.splitlines())
            if f.runtime_error:
                label = "torch raises" if lang != "zh" else "torch 报错"
                out.append(f"  {' ' * width} = {label}: RuntimeError: {_shorten(f.runtime_error)}")
            if f.fix:
                kind = f.fix.applicability if lang != "zh" else {"safe": "安全修复", "unsafe": "不安全修复"}[f.fix.applicability]
                if lang == "zh":  # 安全修复 / 不安全修复 already say "fix"
                    out.append(f"  {' ' * width} = {paint(kind, '32')}: {f.fix.message}")
                else:
                    out.append(f"  {' ' * width} = {paint('fix', '32')} ({kind}): {f.fix.message}")
            out.append("")
        for u in (unused or {}).get(r.path, []):
            out.append(f"{r.path}:{_place(r, u.line, u.col)}: {paint('unused-noqa', '33')} " + _unused_message(u, lang))
    return "\n".join(out)


def _unused_message(u: UnusedNoqa, lang: str) -> str:
    if lang == "zh":
        return (f"未使用的抑制注释（{', '.join(u.codes)} 在此处没有报告）" if u.codes
                else f"未使用的抑制注释 `{u.directive}`（没有要抑制的问题）")
    return (f"unused suppression ({', '.join(u.codes)} not reported here)" if u.codes
            else f"unused suppression `{u.directive}` (nothing to suppress)")


def _shorten(text: str, limit: int = 160) -> str:
    """Whole sentences only: drop trailing sentences (torch's anomaly-detection hint) past `limit`, never the
    first one, never part of a word."""
    if len(text) <= limit:
        return text
    end = text.rfind(". ", 0, limit)
    if end < 0:
        end = text.find(". ")
    return text[: end + 1] if end >= 0 else text


def artifact_uri(path: str) -> str:
    """A SARIF artifactLocation URI: a relative reference or a file: URI, percent-encoded (RFC 3986)."""
    p = Path(path)
    if p.is_absolute():
        return p.as_uri()
    return quote(p.as_posix(), safe="/")


def format_sarif(results: list[FileResult], unused: dict | None = None) -> str:
    from .rules import all_rules

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
                     "physicalLocation": {"artifactLocation": {"uri": uri}, "region": region(rel.span)}}
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


def _gh_data(text: str) -> str:
    """A workflow command's message: `%`, CR and LF escaped (GitHub's escapeData)."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _gh_property(text: str) -> str:
    """A workflow command's property value: also `:` and `,` escaped (GitHub's escapeProperty)."""
    return _gh_data(text).replace(":", "%3A").replace(",", "%2C")


def _file_lines(r: FileResult):
    """For a notebook: analysed line -> 1-based line of the `.ipynb` text that holds it (GitHub and SARIF point
    into the file as it is on disk, after --fix); None for a Python file."""
    if r.cells is None:
        return None
    try:
        if r.notebook is not None:
            nb = Notebook.from_text(r.notebook.dumps())
        else:  # a cached result: the file is what was checked
            nb = Notebook.from_text(read_regular(r.path, DEFAULT_MAX_BYTES * 100).decode("utf-8-sig"))
    except (SourceError, NotebookError, UnicodeDecodeError):
        return lambda line: 1
    return lambda line: nb.file_line(*r.where(line))


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


def format_statistics(results: list[FileResult], fix_mode: str, unused: dict | None = None) -> str:
    counts: Counter = Counter()
    names: dict[str, str] = {}
    fixable: set[str] = set()
    for r in results:
        for f in r.findings:
            counts[f.code] += 1
            names[f.code] = f.name
            if f.fix and f.fix.applicability == SAFE:
                fixable.add(f.code)
    n_unused = sum(len(u) for u in (unused or {}).values())
    if n_unused:  # --report-unused-noqa: not a rule, so no code
        counts["-"], names["-"] = n_unused, "unused-noqa"
    if not counts:
        return ""
    width = len(str(max(counts.values())))
    return "\n".join(f"{str(n).rjust(width)}\t{code}\t{'[*] ' if code in fixable else ''}{names[code]}"
                     for code, n in sorted(counts.items(), key=lambda item: (-item[1], item[0])))


def summary_lines(results: list[FileResult], lang: str, fix_mode: str, unused: dict | None = None) -> list[str]:
    """The closing lines; "All checks passed" only when every path was read, every line analysed and nothing
    reported (an unused suppression reported by --report-unused-noqa counts as a problem, as ruff's RUF100)."""
    zh = lang == "zh"
    unused = unused or {}
    checked = sum(1 for r in results if not r.error and not r.skipped)
    errors = sum(1 for r in results if r.error)
    unparsed = sum(1 for r in results if r.notes)
    problems = sum(len(r.findings) + len(unused.get(r.path, ())) for r in results)
    with_problems = sum(1 for r in results if r.findings or unused.get(r.path))
    fixed = sum(r.applied for r in results)
    fixed_files = sum(1 for r in results if r.applied)
    safe = sum(1 for r in results for f in r.findings if f.fix and f.fix.applicability == SAFE)
    unsafe = sum(1 for r in results for f in r.findings if f.fix and f.fix.applicability != SAFE)
    out = []
    added = sum(r.noqa_added for r in results)
    if added:
        files = sum(1 for r in results if r.noqa_added)
        out.append(f"在 {files} 个文件中添加了 {added} 条 noqa 注释。" if zh
                   else f"Added {added} noqa comment(s) in {files} file(s).")
    if fixed:
        out.append(f"已修复 {fixed_files} 个文件中的 {fixed} 个问题。" if zh
                   else f"Fixed {fixed} problem(s) in {fixed_files} file(s).")
    if problems:
        out.append(f"在 {with_problems} 个文件中发现 {problems} 个问题（共检查 {checked} 个文件）。" if zh
                   else f"Found {problems} problem(s) in {with_problems} file(s) ({checked} file(s) checked).")
        hidden = unsafe if fix_mode != "unsafe" else 0
        if safe and fix_mode == "none":
            line = f"[*] {safe} 个可用 --fix 修复" if zh else f"[*] {safe} fixable with --fix"
            if hidden:
                line += (f"（另有 {hidden} 个不安全修复，需加 --unsafe-fixes）" if zh
                         else f" ({hidden} hidden fix(es) can be enabled with --unsafe-fixes)")
            out.append(line + ("。" if zh else "."))
        elif hidden:
            flag = "--fix --unsafe-fixes" if fix_mode == "none" else "--unsafe-fixes"
            out.append(f"没有安全修复（另有 {hidden} 个不安全修复，需加 {flag}）。" if zh
                       else f"No safe fixes available ({hidden} hidden fix(es) can be enabled with {flag}).")
    elif not errors and not unparsed and checked:
        out.append(f"全部通过（检查了 {checked} 个文件）。" if zh else f"All checks passed ({checked} file(s) checked).")
    elif not errors and not unparsed:
        out.append("没有检查任何文件。" if zh else "No files were checked.")
    elif checked > unparsed:
        out.append(f"已分析的代码中没有发现问题（共检查 {checked} 个文件）。" if zh
                   else f"No problems found in the code that was analysed ({checked} file(s) checked).")
    if unparsed:
        out.append(f"{unparsed} 个文件中有未分析的代码（见上文；这些代码没有检查）。" if zh
                   else f"{unparsed} file(s) had code that was not analysed (reported above); that code was not checked.")
    if errors:
        out.append(f"{errors} 个路径无法检查（见上文）。" if zh
                   else f"{errors} path(s) could not be checked (reported above).")
    return out


# ---------------------------------------------------------------- commands
def _codes(values: list[str] | None) -> tuple[str, ...] | None:
    if not values:
        return None
    return tuple(c.strip().upper() for v in values for c in v.split(",") if c.strip())


def _lang(config: Config, cli_lang: str | None) -> str:
    return cli_lang or config.language or locale_language()


def _stdin_mode(args) -> bool:
    return args.paths == ["-"] or (not args.paths and bool(args.stdin_filename))


def cmd_check(args: argparse.Namespace) -> int:
    overrides = {"select": _codes(args.select), "ignore": _codes(args.ignore),
                 "extend_select": _codes(args.extend_select), "language": args.lang}
    try:
        resolver = ConfigResolver(overrides, args.config, args.isolated)
        run_config = resolver.for_path(args.stdin_filename or ".")
    except ConfigError as exc:
        print(f"gradguard: configuration error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    lang = _lang(run_config, args.lang)
    fix_mode = "unsafe" if (args.fix and args.unsafe_fixes) else ("safe" if args.fix else "none")
    if args.diff:
        fix_mode = "unsafe" if args.unsafe_fixes else "safe"
    stdin = _stdin_mode(args)
    results: list[FileResult] = []
    status = EXIT_CLEAN
    data = None
    if stdin:
        data = sys.stdin.buffer.read()
        name = args.stdin_filename or "-"
        result = check_one(name, None, run_config, lang, fix_mode, args.max_file_bytes, args.add_noqa, data=data)
        results.append(result)
    else:
        paths = args.paths or ["."]
        try:
            files = discover(paths, resolver, not args.no_default_excludes, args.force_exclude)
            configs = {str(p): resolver.for_path(p) for p in files}
        except ConfigError as exc:
            print(f"gradguard: configuration error: {exc}", file=sys.stderr)
            return EXIT_ERROR
        results = _check_files(files, configs, args, lang, fix_mode)
        if not files and not args.silent:
            print("warning: No Python files found under the given paths." if lang != "zh"
                  else "警告：给定路径下没有找到 Python 文件。", file=sys.stderr)
    for r in results:
        if r.error:
            print(f"{r.path}: {r.error}", file=sys.stderr)
            status = EXIT_ERROR
        elif r.skipped and not (args.quiet or args.silent):
            print(f"{r.path}: {r.skipped}", file=sys.stderr)
    status = _write_fixes(results, args, fix_mode, stdin, status, data if stdin else None, lang)
    if any(r.notes for r in results):
        status = EXIT_ERROR  # something was not analysed: never a pass
    if args.diff:
        return max(status, EXIT_FINDINGS if any(r.applied for r in results) else EXIT_CLEAN)
    unused = {}
    if args.report_unused_noqa:
        unused = {r.path: u for r in results if not r.error and not r.skipped
                  for u in [unused_noqa(r, resolver.for_path(r.path) if not stdin else run_config)] if u}
    findings = sum(len(r.findings) for r in results) + sum(len(u) for u in unused.values())
    try:
        stream, close = _report_stream(args, fix_mode, stdin)
    except OSError as exc:
        print(f"gradguard: cannot write {args.output_file}: {exc.strerror or exc}", file=sys.stderr)
        return EXIT_ERROR
    try:
        _print_report(results, unused, args, lang, fix_mode, stream)
    finally:
        if close:
            stream.close()
    if findings and status != EXIT_ERROR and not args.exit_zero:
        status = EXIT_FINDINGS
    return status


def _check_files(files: list[Path], configs: dict, args, lang: str, fix_mode: str) -> list[FileResult]:
    from .cache import Cache

    use_cache = not args.no_cache and fix_mode == "none" and not args.add_noqa
    cache = Cache.open(args.cache_dir) if use_cache else None
    results: dict[int, FileResult] = {}
    tasks = []
    for i, p in enumerate(files):
        path = str(p)
        config = configs[path]
        file_lang = args.lang or config.language or locale_language()
        if cache is not None:
            hit = cache.get(path, config, file_lang, args.max_file_bytes)
            if hit is not None:
                results[i] = hit
                continue
        tasks.append((i, (path, config, file_lang, fix_mode, args.max_file_bytes, args.add_noqa)))
    jobs = args.jobs if args.jobs and args.jobs > 0 else (os.cpu_count() or 1)
    jobs = min(jobs, max(1, len(tasks) // 4))  # a worker costs an interpreter: only worth it for several files
    if jobs > 1:
        from concurrent.futures import ProcessPoolExecutor

        _engine()  # imported once here: forked workers inherit it
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            done = list(pool.map(_check_worker, [t for _, t in tasks], chunksize=max(1, len(tasks) // (jobs * 8))))
    else:
        done = [_check_worker(t) for _, t in tasks]
    for (i, task), r in zip(tasks, done):
        results[i] = r
        if cache is not None and not r.error:
            cache.put(task[0], task[1], task[2], r)
    if cache is not None:
        cache.close()
    return [results[i] for i in range(len(files))]


def _write_fixes(results: list[FileResult], args, fix_mode: str, stdin: bool, status: int,
                 stdin_data: bytes | None = None, lang: str = "en") -> int:
    if fix_mode == "none" and not args.add_noqa:
        return status
    for r in results:
        if r.error or r.skipped:
            if stdin and not args.diff and stdin_data is not None:
                sys.stdout.buffer.write(stdin_data)  # a filter must never swallow its input
                sys.stdout.flush()
            continue
        changed = r.fixed_text is not None and r.fixed_text != r.original_text
        if stdin and not args.diff:
            if fix_mode != "none" or args.add_noqa:
                text = r.fixed_text if r.fixed_text is not None else r.original_text
                if r.notebook is not None:
                    sys.stdout.buffer.write(r.notebook.dumps().encode("utf-8"))
                else:
                    sys.stdout.buffer.write(encode_python(text, r.decoded or Decoded(text)))
                sys.stdout.flush()
            continue
        if not changed:
            continue
        if args.diff:
            sys.stdout.writelines(_diff(r))
            continue
        if r.notebook is not None:
            problem = write_atomically(r.path, r.notebook.dumps(), r.notebook.raw)
        else:
            problem = write_atomically(r.path, r.fixed_text, r.original_text, r.decoded)
        if problem:
            print(f"{r.path}: {problem}", file=sys.stderr)
            status = EXIT_ERROR
            r.applied = r.noqa_added = 0
            r.applied_codes.clear()
        elif args.silent:
            continue
        elif args.add_noqa and fix_mode == "none":
            print(f"{r.path}：添加了 {r.noqa_added} 条 noqa 注释" if lang == "zh"
                  else f"{r.path}: added {r.noqa_added} noqa comment(s)", file=sys.stderr)
        elif not args.quiet:
            print(f"{r.path}：修复了 {r.applied} 个问题" if lang == "zh"
                  else f"{r.path}: fixed {r.applied} finding(s)", file=sys.stderr)
    return status


def _diff(r: FileResult):
    if r.notebook is None:
        return difflib.unified_diff(r.original_text.splitlines(keepends=True), r.fixed_text.splitlines(keepends=True),
                                    fromfile=f"a/{r.path}", tofile=f"b/{r.path}")
    before = Notebook.from_text(r.notebook.raw)
    out = []
    for index, old, new in zip(before.code_cells, before.sources, r.notebook.sources):
        if old != new:
            out.extend(difflib.unified_diff(old.splitlines(keepends=True), new.splitlines(keepends=True),
                                            fromfile=f"a/{r.path}:cell {index + 1}", tofile=f"b/{r.path}:cell {index + 1}"))
            if out and not out[-1].endswith("\n"):
                out[-1] += "\n"
    return out


def _report_stream(args, fix_mode: str, stdin: bool):
    if args.output_file:
        return open(args.output_file, "w", encoding="utf-8"), True
    # With --fix on stdin, stdout carries the fixed code: the report goes to stderr.
    if stdin and (fix_mode != "none" or args.add_noqa):
        return sys.stderr, False
    return sys.stdout, False


def _print_report(results, unused, args, lang, fix_mode, stream) -> None:
    if args.silent:
        return
    if args.format == "json":
        out = [finding_json(r.path, f, r) for r in results for f in r.findings]
        out += [parse_note_json(r.path, n, r) for r in results for n in r.notes]
        out += [{"filename": path, "code": None, "name": "unused-noqa", "message": _unused_message(u, "en"),
                 "severity": "warning", "location": _loc(Span(u.line, u.col, u.line, u.col), r),
                 "end_location": _loc(Span(u.line, u.col, u.line, u.col), r), "fix": None, "url": None,
                 "noqa_row": None, "related": [], "runtime_error": "", "explanation": ""}
                for r in results for path in [r.path] for u in unused.get(path, [])]
        print(json.dumps(out, indent=2, ensure_ascii=False), file=stream)
        return
    if args.format == "sarif":
        print(format_sarif(results, unused), file=stream)
        return
    if args.format == "github":
        text = format_github(results, unused)
        if text:
            print(text, file=stream)
        return
    if args.statistics:
        text = format_statistics(results, fix_mode, unused)
    else:
        color = stream is sys.stdout and sys.stdout.isatty() and not os.environ.get("NO_COLOR")
        text = format_text(results, args.concise, color, lang, unused)
    if text:
        print(text, file=stream)
    if args.show_fixes:
        print(_fixes_listing(results, fix_mode, lang), file=stream)
    if not args.quiet:
        for line in summary_lines(results, lang, fix_mode, unused):
            print(line, file=stream)


def _fixes_listing(results: list[FileResult], fix_mode: str, lang: str) -> str:
    """--show-fixes: what --fix changed per file and code (or, without --fix, what it would change)."""
    zh = lang == "zh"
    rows: list[tuple[str, Counter]] = []
    if fix_mode != "none":
        rows = [(r.path, r.applied_codes) for r in results if r.applied_codes]
        head = "已应用的修复：" if zh else "Fixed:"
    else:
        for r in results:
            c = Counter(f.code for f in r.findings if f.fix and f.fix.applicability == SAFE)
            if c:
                rows.append((r.path, c))
        head = "--fix 会修复：" if zh else "Would fix with --fix:"
    if not rows:
        return "没有修复。" if zh else "No fixes."
    out = [head]
    for path, counts in rows:
        out.append(f"- {path}:")
        out.extend(f"    {n} × {code}" for code, n in sorted(counts.items()))
    return "\n".join(out)


def cmd_rule(args: argparse.Namespace) -> int:
    from .rules import all_rules, get_rule

    lang = args.lang or default_language(os.getcwd())
    if args.all or not args.code:
        width = max(len(r.name) for r in all_rules())
        for r in all_rules():
            print(f"{r.code}  {r.name.ljust(width)}  {r.family:<15} fix: {r.fix_kind:<12} {r.summary[lang]}")
        return EXIT_CLEAN
    rule = get_rule(args.code)
    if rule is None:
        print(f"gradguard: unknown rule {args.code!r}; `gradguard rule --all` lists them", file=sys.stderr)
        return EXIT_ERROR
    print(rule.docs(lang))
    return EXIT_CLEAN


CHECK_EXAMPLES = """\
examples:
  gradguard check                      check the current folder (same as `gradguard check .`)
  gradguard check src/ train.py        folders recurse; .gitignore, .venv, site-packages are skipped
  gradguard check --fix .              apply safe fixes
  gradguard check --fix --unsafe-fixes .
  gradguard check --diff .             show the fixes, change nothing
  gradguard check --format github .    annotations in GitHub Actions
  gradguard check --statistics .       one line per rule with its count
  cat train.py | gradguard check --stdin-filename train.py -

exit status: 0 no problems, 1 problems found, 2 error (unreadable path, configuration error,
code that could not be analysed)
"""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="gradguard", description="Catch PyTorch autograd in-place errors before the run.",
        epilog="examples:\n  gradguard check .\n  gradguard rule GG101\n  gradguard explain traceback.txt\n"
               "run `gradguard check --help` for the checker's options",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"gradguard {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    check = sub.add_parser("check", help="check files, folders and notebooks",
                           description="Check Python files and Jupyter notebooks for autograd in-place errors.",
                           epilog=CHECK_EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    check.add_argument("paths", nargs="*", metavar="PATH",
                       help="files, folders or notebooks (default: the current folder; `-` reads stdin)")
    out = check.add_argument_group("output")
    out.add_argument("--format", choices=("text", "json", "sarif", "github"), default="text",
                     help="output format (default: text)")
    out.add_argument("--concise", action="store_true", help="one line per finding")
    out.add_argument("--statistics", action="store_true", help="print one line per rule with its count instead of each finding")
    out.add_argument("--output-file", "-o", metavar="FILE", help="write the report to FILE instead of stdout")
    out.add_argument("--quiet", "-q", action="store_true", help="print findings only, no summary")
    out.add_argument("--silent", "-s", action="store_true", help="print nothing; only the exit status tells")
    out.add_argument("--show-fixes", action="store_true", help="list the fixes applied (or applicable) per file and rule")
    out.add_argument("--lang", choices=("en", "zh"), help="language of messages (default: config, else the locale)")
    out.add_argument("--exit-zero", action="store_true", help="exit 0 even when problems are found (errors still exit 2)")
    out.add_argument("--report-unused-noqa", action="store_true",
                     help="report `# noqa: GG...` and `# gradguard: ignore` comments that suppress nothing")
    rules = check.add_argument_group("rules")
    rules.add_argument("--select", action="append", metavar="CODES", help="codes or prefixes to enable (comma separated)")
    rules.add_argument("--ignore", action="append", metavar="CODES", help="codes or prefixes to disable")
    rules.add_argument("--extend-select", action="append", metavar="CODES", help="codes or prefixes to add to the selection")
    fixing = check.add_argument_group("fixes")
    fixing.add_argument("--fix", action="store_true", help="apply safe fixes")
    fixing.add_argument("--unsafe-fixes", action="store_true", help="with --fix or --diff: apply unsafe fixes too")
    fixing.add_argument("--diff", action="store_true", help="print the fixes as a diff instead of writing them")
    fixing.add_argument("--add-noqa", action="store_true", help="add `# noqa: CODE` to every line with a finding")
    files = check.add_argument_group("files and configuration")
    files.add_argument("--config", metavar="PATH", help="use this pyproject.toml (or folder) for every file")
    files.add_argument("--isolated", action="store_true", help="ignore every configuration file")
    files.add_argument("--force-exclude", action="store_true",
                       help="apply `exclude` and the default excludes to files named on the command line too "
                            "(as pre-commit passes them)")
    files.add_argument("--no-default-excludes", action="store_true",
                       help="also check site-packages, .venv, build folders and .gitignored files")
    files.add_argument("--stdin-filename", metavar="PATH", help="the path of the code read from stdin (for config and messages)")
    files.add_argument("--max-file-bytes", type=int, default=DEFAULT_MAX_BYTES, metavar="N",
                       help=f"larger files are reported as not analysed, exit status 2 (default: {DEFAULT_MAX_BYTES})")
    run = check.add_argument_group("running")
    run.add_argument("--jobs", "-j", type=int, default=0, metavar="N", help="worker processes (default: the CPU count)")
    run.add_argument("--no-cache", action="store_true", help="re-analyse every file, do not read or write the cache")
    run.add_argument("--cache-dir", metavar="DIR",
                     default=os.environ.get("GRADGUARD_CACHE_DIR", ".gradguard_cache"),
                     help="where results of unchanged files are kept (default: .gradguard_cache, or $GRADGUARD_CACHE_DIR)")
    rule = sub.add_parser("rule", help="show a rule's documentation",
                          epilog="examples:\n  gradguard rule GG101\n  gradguard rule --all --lang zh",
                          formatter_class=argparse.RawDescriptionHelpFormatter)
    rule.add_argument("code", nargs="?", help="a rule code such as GG101")
    rule.add_argument("--all", action="store_true", help="list every rule")
    rule.add_argument("--lang", choices=("en", "zh"),
                      help="language of the docs (default: the config's `language`, else the locale)")
    sub.add_parser("server", help="run the language server over stdio", add_help=False)
    sub.add_parser("trace", help="run a script with the in-place tracer (needs gradguard[tracer])", add_help=False)
    sub.add_parser("explain", help="explain an autograd error message or traceback", add_help=False)
    sub.add_parser("mcp", help="run the MCP server for coding agents over stdio (needs gradguard[mcp])", add_help=False)
    return parser


# What `gradguard server` imports beyond the checker (the `lsp` extra; a CLI-only install goes without).
LSP_MODULES = ("pygls", "lsprotocol", "jedi")


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    # Subcommands that own their arguments.
    if argv and argv[0] in ("server", "trace", "explain", "mcp"):
        command, rest = argv[0], argv[1:]
        if command == "mcp":
            from .mcp_server import main as mcp_main
            return mcp_main(rest)
        if command == "server":
            import importlib.util

            missing = [name for name in LSP_MODULES if importlib.util.find_spec(name) is None]
            if missing:
                print(f"gradguard server: the language server needs {', '.join(missing)}, not installed in this "
                      "Python; install them with `pip install 'gradguard[lsp]'` (or `pipx install "
                      "'gradguard[lsp]'`). The VS Code extension needs nothing: it bundles them.", file=sys.stderr)
                return EXIT_ERROR
            from .lsp.server import main as server_main
            return server_main(rest)
        if command == "trace":
            import importlib.util

            if importlib.util.find_spec("torch") is None and not {"-h", "--help"} & set(rest):
                print("gradguard trace: torch is not installed in this Python; install it with "
                      "`pip install 'gradguard[tracer]'` (or install torch)", file=sys.stderr)
                return EXIT_ERROR
            from .trace import main as trace_main
            return trace_main(rest)
        from .explain import main as explain_main
        return explain_main(rest)
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return EXIT_ERROR if exc.code else EXIT_CLEAN
    if args.command == "check":
        if args.unsafe_fixes and not (args.fix or args.diff):
            print("gradguard: --unsafe-fixes needs --fix or --diff", file=sys.stderr)
            return EXIT_ERROR
        if args.add_noqa and (args.fix or args.diff):
            print("gradguard: --add-noqa cannot be combined with --fix or --diff", file=sys.stderr)
            return EXIT_ERROR
        if "-" in args.paths and args.paths != ["-"]:
            print("gradguard: `-` (stdin) cannot be combined with other paths", file=sys.stderr)
            return EXIT_ERROR
        return cmd_check(args)
    if args.command == "rule":
        return cmd_rule(args)
    parser.print_help()
    return EXIT_ERROR


def entry() -> int:
    """Console entry point: a closed pipe (`gradguard check . | head`) ends quietly."""
    try:
        return main()
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_FINDINGS


if __name__ == "__main__":
    sys.exit(entry())
