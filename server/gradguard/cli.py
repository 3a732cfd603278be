"""The `gradguard` command: check, rule, server, trace, explain."""
from __future__ import annotations

import argparse
import difflib
import fnmatch
import json
import os
import sys
import tempfile
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path

from . import __version__
from .config import DEFAULT_EXCLUDES, Config, ConfigError, load_config
from .engine import Engine, decode_source
from .findings import SAFE, Finding, ParseNote
from .rules import DOCS_URL, all_rules, get_rule
from .source import Source, Span

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2
DEFAULT_MAX_BYTES = 10 * 1024 * 1024


# ---------------------------------------------------------------- file discovery
def _gitignore_patterns(folder: Path) -> list[str]:
    path = folder / ".gitignore"
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
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


def discover(paths: list[str], excludes: tuple[str, ...], default_excludes: bool) -> list[Path]:
    """Python files under `paths`; explicit files are always included."""
    found: list[Path] = []
    names = set(DEFAULT_EXCLUDES) if default_excludes else set()
    for raw in paths:
        root = Path(raw)
        if root.is_file():
            found.append(root)
            continue
        if not root.is_dir():
            found.append(root)  # reported as unreadable later
            continue
        patterns = list(excludes) + (_gitignore_patterns(root) if default_excludes else [])
        for folder, dirs, files in os.walk(root):
            folder_path = Path(folder)
            rel_folder = os.path.relpath(folder, root)
            local = patterns + (_gitignore_patterns(folder_path) if default_excludes and folder_path != root else [])
            def keep(d: str) -> bool:
                if d == ".git" or (default_excludes and (d in names or d.startswith("."))):
                    return False
                return not _ignored(os.path.normpath(os.path.join(rel_folder, d)), d, local)

            dirs[:] = sorted(d for d in dirs if keep(d))
            for f in sorted(files):
                if f.endswith((".py", ".pyi")) and not _ignored(os.path.normpath(os.path.join(rel_folder, f)), f, local):
                    found.append(folder_path / f)
    return found


# ---------------------------------------------------------------- checking
@dataclass
class FileResult:
    path: str
    findings: list[Finding] = field(default_factory=list)
    notes: list[ParseNote] = field(default_factory=list)
    error: str = ""  # could not read or decode
    fixed_text: str | None = None  # after --fix
    original_text: str = ""
    applied: int = 0
    lines: int = 0


_ENGINE: Engine | None = None


def _engine() -> Engine:
    global _ENGINE
    if _ENGINE is None:
        _ENGINE = Engine(editor=False)
    return _ENGINE


def check_one(path: str, text: str | None, config: Config, lang: str, fix_mode: str, max_bytes: int) -> FileResult:
    """Check one file; with fix_mode 'safe' or 'unsafe', also compute the fixed text."""
    result = FileResult(path)
    if text is None:
        try:
            size = os.path.getsize(path)
            if size > max_bytes:
                result.error = f"file is {size} bytes, above the limit of {max_bytes} (--max-file-bytes); not analysed"
                return result
            data = Path(path).read_bytes()
        except OSError as exc:
            result.error = f"cannot read: {exc.strerror or exc}"
            return result
        try:
            text = decode_source(data)
        except UnicodeDecodeError as exc:
            result.error = f"not UTF-8 (byte 0x{data[exc.start]:02x} at offset {exc.start}); not analysed"
            return result
        if "\x00" in text:
            result.error = "contains NUL bytes (binary?); not analysed"
            return result
    result.original_text = text
    result.lines = text.count("\n") + 1
    engine = _engine()
    report = engine.check(text, path, config, lang)
    result.findings = report.findings
    result.notes = report.parse_notes
    if fix_mode != "none":
        current = text
        for _ in range(5):  # fixes can expose further fixes; stop when nothing applies
            fixable = [f for f in report.findings if f.fix and (fix_mode == "unsafe" or f.fix.applicability == SAFE)]
            if not fixable:
                break
            current, applied = apply_fixes(current, fixable)
            if not applied:
                break
            result.applied += applied
            report = engine.check(current, path, config, lang)
        result.fixed_text = current
        result.findings = report.findings
        result.notes = report.parse_notes
    return result


def apply_fixes(text: str, findings: list[Finding]) -> tuple[str, int]:
    """Apply non-overlapping fixes (whole fixes only), last first so offsets stay valid."""
    source = Source(text)
    text = source.text
    chosen = []
    taken: list[tuple[int, int]] = []
    applied = 0
    for finding in sorted(findings, key=lambda f: (f.span.start_line, f.span.start_col)):
        ranges = [(source.offset(e.span.start_line, e.span.start_col), source.offset(e.span.end_line, e.span.end_col))
                  for e in finding.fix.edits]
        if any((a < tb and ta < b) or a == ta for a, b in ranges for ta, tb in taken):
            continue
        taken.extend(ranges)
        chosen.extend(zip(ranges, (e.new_text for e in finding.fix.edits)))
        applied += 1
    for (start, end), new in sorted(chosen, key=lambda item: item[0], reverse=True):
        text = text[:start] + new + text[end:]
    return text, applied


def write_atomically(path: str, text: str, expected_original: str) -> str | None:
    """Replace the file's content via a temporary file and rename; None on success, else the reason.

    Writes through symlinks to the real file, keeps its mode, line endings and UTF-8 BOM, refuses
    read-only files and files that changed since they were read, and never leaves a truncated file
    or a temporary file behind (also on Ctrl-C).
    """
    target = Path(os.path.realpath(path))
    try:
        raw = target.read_bytes()
        current = decode_source(raw)
        mode = target.stat().st_mode
    except (OSError, UnicodeDecodeError) as exc:
        return f"cannot re-read before writing: {exc}"
    if current.replace("\r\n", "\n") != expected_original.replace("\r\n", "\n"):
        return "file changed on disk while gradguard was checking it; not fixed"
    if not mode & 0o222:
        return "file is read-only; not fixed"
    if "\r\n" in current:
        text = text.replace("\n", "\r\n")
    data = (b"\xef\xbb\xbf" if raw.startswith(b"\xef\xbb\xbf") else b"") + text.encode("utf-8")
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
    path, config, lang, fix_mode, max_bytes = args
    try:
        return check_one(path, None, config, lang, fix_mode, max_bytes)
    except Exception as exc:  # one file's internal error must not end the run
        import traceback

        where = traceback.extract_tb(exc.__traceback__)[-1]
        return FileResult(path, error=f"internal error ({type(exc).__name__}: {exc} at "
                                      f"{Path(where.filename).name}:{where.lineno}); please report it")


# ---------------------------------------------------------------- output
def _loc(span: Span, source_lines: list[str] | None = None) -> dict:
    return {"row": span.start_line + 1, "column": span.start_col + 1}


def _end(span: Span) -> dict:
    return {"row": span.end_line + 1, "column": span.end_col + 1}


def finding_json(path: str, f: Finding) -> dict:
    fix = None
    if f.fix:
        fix = {
            "applicability": f.fix.applicability,
            "message": f.fix.message,
            "edits": [{"content": e.new_text, "location": _loc(e.span), "end_location": _end(e.span)} for e in f.fix.edits],
        }
    return {
        "filename": path,
        "code": f.code,
        "name": f.name,
        "message": f.message,
        "severity": f.severity,
        "location": _loc(f.span),
        "end_location": _end(f.span),
        "fix": fix,
        "url": DOCS_URL.format(code=f.code),
        "noqa_row": f.span.start_line + 1,
        "related": [{"message": r.message, "location": _loc(r.span), "end_location": _end(r.span)} for r in f.related],
        "runtime_error": f.runtime_error,
        "explanation": f.explanation,
    }


def parse_note_json(path: str, note: ParseNote) -> dict:
    """A block that could not be parsed, as ruff reports syntax errors: `code` is null."""
    return {"filename": path, "code": None, "name": "syntax-error", "message": note.message, "severity": "error",
            "location": _loc(note.span), "end_location": _end(note.span), "fix": None, "url": None,
            "noqa_row": None, "related": [], "runtime_error": "", "explanation": ""}


def _color(enabled: bool):
    def paint(text: str, code: str) -> str:
        return f"\x1b[{code}m{text}\x1b[0m" if enabled else text
    return paint


def format_text(results: list[FileResult], concise: bool, color: bool, lang: str) -> str:
    paint = _color(color)
    out: list[str] = []
    for r in results:
        lines = r.original_text.split("\n") if not r.fixed_text else r.fixed_text.split("\n")
        for note in r.notes:
            out.append(f"{r.path}:{note.span.start_line + 1}:{note.span.start_col + 1}: {paint('parse', '33')} {note.message}")
        for f in r.findings:
            head = f"{paint(r.path, '1')}:{f.span.start_line + 1}:{f.span.start_col + 1}: {paint(f.code, '31;1')} {f.message}"
            out.append(head)
            if concise:
                continue
            width = len(str(f.span.end_line + 1))
            for ln in range(f.span.start_line, min(f.span.end_line, f.span.start_line + 3) + 1):
                text = lines[ln] if ln < len(lines) else ""
                out.append(f"  {str(ln + 1).rjust(width)} | {text}")
                if ln == f.span.start_line:
                    end = f.span.end_col if f.span.end_line == ln else len(text)
                    out.append(f"  {' ' * width} | {' ' * f.span.start_col}{paint('^' * max(1, end - f.span.start_col), '31')}")
            note, line_word = ("注", "第 {} 行") if lang == "zh" else ("note", "line {}")
            for rel in f.related:
                out.append(f"  {' ' * width} = {paint(note, '36')}: {line_word.format(rel.span.start_line + 1)}: {rel.message}")
            if f.explanation:
                label = "why" if lang != "zh" else "原因"
                out.append(f"  {' ' * width} = {paint(label, '36')}:")
                out.extend(f"  {' ' * width}     {line}" for line in f.explanation.splitlines())
            if f.runtime_error:
                label = "torch raises" if lang != "zh" else "torch 报错"
                out.append(f"  {' ' * width} = {label}: RuntimeError: {_shorten(f.runtime_error)}")
            if f.fix:
                kind = f.fix.applicability if lang != "zh" else {"safe": "安全修复", "unsafe": "不安全修复"}[f.fix.applicability]
                out.append(f"  {' ' * width} = {paint('fix' if lang != 'zh' else '快速修复', '32')} ({kind}): {f.fix.message}")
            out.append("")
    return "\n".join(out)


def _shorten(text: str, limit: int = 160) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def format_sarif(results: list[FileResult]) -> str:
    rules = [
        {"id": r.code, "name": r.name, "shortDescription": {"text": r.summary["en"]},
         "fullDescription": {"text": r.what["en"]}, "helpUri": DOCS_URL.format(code=r.code),
         "help": {"text": r.summary["en"], "markdown": r.docs("en")},
         "defaultConfiguration": {"level": "error" if r.severity == "error" else "warning"}}
        for r in all_rules()
    ]

    def region(span: Span) -> dict:
        return {"startLine": span.start_line + 1, "startColumn": span.start_col + 1,
                "endLine": span.end_line + 1, "endColumn": span.end_col + 1}

    sarif_results = []
    for r in results:
        uri = Path(r.path).as_posix()
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
            if f.fix:
                item["fixes"] = [{
                    "description": {"text": f"{f.fix.message} ({f.fix.applicability})"},
                    "artifactChanges": [{"artifactLocation": {"uri": uri}, "replacements": [
                        {"deletedRegion": region(e.span), "insertedContent": {"text": e.new_text}} for e in f.fix.edits]}],
                }]
            sarif_results.append(item)
    doc = {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{"tool": {"driver": {"name": "gradguard", "version": __version__, "informationUri":
                                      "https://gradguard.invalid", "rules": rules}},
                  "results": sarif_results}],
    }
    return json.dumps(doc, indent=2, ensure_ascii=False)


def format_github(results: list[FileResult]) -> str:
    out = []
    for r in results:
        for f in r.findings:
            level = "error" if f.severity == "error" else "warning"
            msg = f.message.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
            out.append(f"::{level} title=gradguard ({f.code}),file={r.path},line={f.span.start_line + 1},"
                       f"col={f.span.start_col + 1},endLine={f.span.end_line + 1},endColumn={f.span.end_col + 1}::"
                       f"{f.code} {msg}")
    return "\n".join(out)


# ---------------------------------------------------------------- commands
def _codes(values: list[str] | None) -> tuple[str, ...] | None:
    if not values:
        return None
    return tuple(c.strip().upper() for v in values for c in v.split(",") if c.strip())


def cmd_check(args: argparse.Namespace) -> int:
    base_root = args.paths[0] if args.paths else "."
    try:
        config = load_config(args.config or (args.stdin_filename or base_root))
        overrides = {"select": _codes(args.select), "ignore": _codes(args.ignore),
                     "extend_select": _codes(args.extend_select), "language": args.lang}
        config = config.merged(overrides)
        if args.ignore and not args.select:
            config = replace(config, ignore=tuple(config.ignore))
    except ConfigError as exc:
        print(f"gradguard: configuration error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    lang = config.language or "en"
    fix_mode = "unsafe" if (args.fix and args.unsafe_fixes) else ("safe" if args.fix else "none")
    if args.diff:
        fix_mode = "unsafe" if args.unsafe_fixes else "safe"
    results: list[FileResult] = []
    status = EXIT_CLEAN
    if not args.paths or args.paths == ["-"]:
        text = sys.stdin.buffer.read()
        try:
            decoded = decode_source(text)
        except UnicodeDecodeError as exc:
            print(f"{args.stdin_filename or '-'}: not UTF-8 (offset {exc.start}); not analysed", file=sys.stderr)
            return EXIT_ERROR
        results.append(check_one(args.stdin_filename or "-", decoded, config, lang, fix_mode, args.max_file_bytes))
    else:
        files = discover(args.paths, config.exclude, not args.no_default_excludes)
        jobs = max(1, args.jobs or 1)
        tasks = [(str(p), config, lang, fix_mode, args.max_file_bytes) for p in files]
        if jobs > 1 and len(tasks) > 1:
            with ProcessPoolExecutor(max_workers=jobs) as pool:
                results = list(pool.map(_check_worker, tasks, chunksize=max(1, len(tasks) // (jobs * 8) or 1)))
        else:
            results = [_check_worker(t) for t in tasks]
    for r in results:
        if r.error:
            print(f"{r.path}: {r.error}", file=sys.stderr)
            status = EXIT_ERROR
    # Fixing: write files (or print the diff, or the fixed stdin).
    if fix_mode != "none":
        for r in results:
            if r.fixed_text is None or r.fixed_text == r.original_text:
                if r.path == (args.stdin_filename or "-") and not args.paths and args.fix and not args.diff:
                    sys.stdout.write(r.original_text)
                continue
            if args.diff:
                sys.stdout.writelines(difflib.unified_diff(
                    r.original_text.splitlines(keepends=True), r.fixed_text.splitlines(keepends=True),
                    fromfile=f"a/{r.path}", tofile=f"b/{r.path}"))
            elif not args.paths or args.paths == ["-"]:
                sys.stdout.write(r.fixed_text)
            else:
                problem = write_atomically(r.path, r.fixed_text, r.original_text)
                if problem:
                    print(f"{r.path}: {problem}", file=sys.stderr)
                    status = EXIT_ERROR
                else:
                    print(f"{r.path}: fixed {r.applied} finding(s)", file=sys.stderr)
        if args.diff:
            return max(status, EXIT_FINDINGS if any(r.applied for r in results) else EXIT_CLEAN)
    findings = sum(len(r.findings) for r in results)
    stdin_fix = fix_mode != "none" and (not args.paths or args.paths == ["-"])
    if args.format == "json":
        out = [finding_json(r.path, f) for r in results for f in r.findings]
        out += [parse_note_json(r.path, n) for r in results for n in r.notes]
        print(json.dumps(out, indent=2, ensure_ascii=False), file=sys.stderr if stdin_fix else sys.stdout)
    elif args.format == "sarif":
        print(format_sarif(results), file=sys.stderr if stdin_fix else sys.stdout)
    elif args.format == "github":
        text = format_github(results)
        if text:
            print(text)
    else:
        color = sys.stdout.isatty() and not os.environ.get("NO_COLOR")
        text = format_text(results, args.concise, color, lang)
        stream = sys.stderr if stdin_fix else sys.stdout
        if text:
            print(text, file=stream)
        checked = sum(1 for r in results if not r.error)
        unparsed = sum(1 for r in results if r.notes)
        fixable = sum(1 for r in results for f in r.findings if f.fix)
        summary = (f"Found {findings} problem(s) in {checked} file(s)" + (f"; {fixable} fixable with --fix"
                   + (" --unsafe-fixes" if any(f.fix and f.fix.applicability != SAFE for r in results for f in r.findings) else "")
                   if fixable else "") + "." if findings else f"All checks passed ({checked} file(s)).")
        if lang == "zh":
            summary = (f"在 {checked} 个文件中发现 {findings} 个问题。" if findings else f"全部通过（{checked} 个文件）。")
        if unparsed:
            summary += (f" {unparsed} file(s) had code that could not be parsed (reported above; the rest was checked)."
                        if lang != "zh" else f" {unparsed} 个文件中有无法解析的代码（见上文；其余部分已检查）。")
        print(summary, file=stream)
    if findings:
        status = max(status, EXIT_FINDINGS) if status != EXIT_ERROR else status
    return status


def cmd_rule(args: argparse.Namespace) -> int:
    lang = args.lang or "en"
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


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="gradguard", description="Catch PyTorch autograd in-place errors before the run.")
    parser.add_argument("--version", action="version", version=f"gradguard {__version__}")
    sub = parser.add_subparsers(dest="command")
    check = sub.add_parser("check", help="check files or folders")
    check.add_argument("paths", nargs="*", help="files or folders (default: stdin when none is given)")
    check.add_argument("--format", choices=("text", "json", "sarif", "github"), default="text")
    check.add_argument("--select", action="append", help="codes or prefixes to enable (comma separated)")
    check.add_argument("--ignore", action="append", help="codes or prefixes to disable")
    check.add_argument("--extend-select", action="append", help="codes or prefixes to add to the selection")
    check.add_argument("--fix", action="store_true", help="apply safe fixes")
    check.add_argument("--unsafe-fixes", action="store_true", help="with --fix or --diff: apply unsafe fixes too")
    check.add_argument("--diff", action="store_true", help="print the fixes as a diff instead of writing them")
    check.add_argument("--jobs", "-j", type=int, default=1, help="worker processes")
    check.add_argument("--stdin-filename", help="the path of the code read from stdin (for config and messages)")
    check.add_argument("--lang", choices=("en", "zh"), help="language of messages")
    check.add_argument("--config", help="a pyproject.toml or folder to read [tool.gradguard] from")
    check.add_argument("--concise", action="store_true", help="one line per finding")
    check.add_argument("--no-default-excludes", action="store_true",
                       help="also check site-packages, .venv, build folders and .gitignored files")
    check.add_argument("--max-file-bytes", type=int, default=DEFAULT_MAX_BYTES, help="skip larger files with a notice")
    rule = sub.add_parser("rule", help="show a rule's documentation")
    rule.add_argument("code", nargs="?")
    rule.add_argument("--all", action="store_true", help="list every rule")
    rule.add_argument("--lang", choices=("en", "zh"))
    sub.add_parser("server", help="run the language server over stdio", add_help=False)
    sub.add_parser("trace", help="run a script with the in-place tracer", add_help=False)
    sub.add_parser("explain", help="explain an autograd error message or traceback", add_help=False)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    # Subcommands that own their arguments.
    if argv and argv[0] in ("server", "trace", "explain"):
        command, rest = argv[0], argv[1:]
        if command == "server":
            from .lsp.server import main as server_main
            return server_main(rest)
        if command == "trace":
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
