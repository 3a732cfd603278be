"""The `gradguard` command: check, rule, server, trace, explain, mcp, agent.

The check command's parts each live in their own module, with file I/O (fileio) below all of them: discovery
(which files), checking (one file's analysis and fixes), fixwrite (fixed text to disk), cache, and output/ (one
module per format). Nothing imports this module but `__main__`: what other code shares lives below it."""
from __future__ import annotations

import argparse
import difflib
import os
import sys

from . import __version__
from .cache import Cache
from .checking import FileResult, check_one, check_paths, unused_noqa
from .config import Config, ConfigError, ConfigResolver, check_flags
from .decoding import Decoded, encode_python
from .fileio import DEFAULT_MAX_BYTES, Roots
from .fixwrite import write_atomically
from .i18n import default_language, locale_language  # `language = "auto"`: the locale
from .notebook import Notebook
from .output import format_github, format_json, format_sarif, format_statistics, format_text, summary_lines
from .output.common import printable
from .output.progress import Progress
from .output.text import _fixes_listing

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


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
        check_flags(overrides)
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
    data = None
    roots = None
    if stdin:
        data = sys.stdin.buffer.read()
        name = args.stdin_filename or "-"
        result = check_one(name, None, run_config, lang, fix_mode, args.max_file_bytes, args.add_noqa, data=data)
        results.append(result)
    else:
        paths = args.paths or ["."]
        roots = Roots.for_arguments(paths)
        try:
            results = _check_files(paths, resolver, args, lang, fix_mode)
        except ConfigError as exc:
            print(f"gradguard: configuration error: {exc}", file=sys.stderr)
            return EXIT_ERROR
        if not results and not args.silent:
            print("warning: No Python files found under the given paths." if lang != "zh"
                  else "警告：给定路径下没有找到 Python 文件。", file=sys.stderr)
    # Exit 2 only for a path nothing could be reported for (unreadable, internal error, a fix not written);
    # whatever was reported (a finding, code not analysed) makes it 1, as ruff does.
    failed = False
    for r in results:
        if r.error:
            print(f"{printable(r.path)}: {printable(r.error)}", file=sys.stderr)
            failed = True
        elif r.skipped and not (args.quiet or args.silent):
            print(f"{printable(r.path)}: {r.skipped}", file=sys.stderr)
    failed |= _write_fixes(results, args, fix_mode, stdin, data if stdin else None, lang, roots)
    unanalysed = any(r.notes for r in results)  # never a pass
    if args.diff:
        if any(r.applied for r in results) or unanalysed:
            return EXIT_FINDINGS
        return EXIT_ERROR if failed else EXIT_CLEAN
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
    if (findings or unanalysed) and not args.exit_zero:
        return EXIT_FINDINGS
    return EXIT_ERROR if failed else EXIT_CLEAN


def _progress_wanted(args) -> bool:
    try:
        return sys.stderr.isatty() and not (args.quiet or args.silent)
    except (AttributeError, ValueError):
        return False


def _check_files(paths: list[str], resolver: ConfigResolver, args, lang: str, fix_mode: str) -> list[FileResult]:
    use_cache = not args.no_cache and fix_mode == "none" and not args.add_noqa
    cache = Cache.open(args.cache_dir) if use_cache else None
    jobs = args.jobs if args.jobs and args.jobs > 0 else (os.cpu_count() or 1)
    progress = Progress(lang, _progress_wanted(args))
    try:
        return check_paths(paths, resolver, args.lang, fix_mode, args.max_file_bytes, args.add_noqa,
                           not args.no_default_excludes, args.force_exclude, jobs, cache, progress.show)
    finally:
        progress.finish()
        if cache is not None:
            cache.close()


def _write_fixes(results: list[FileResult], args, fix_mode: str, stdin: bool,
                 stdin_data: bytes | None = None, lang: str = "en", roots: Roots | None = None) -> bool:
    """Write --fix / --add-noqa results (only inside `roots`); True when a fix could not be written."""
    failed = False
    if fix_mode == "none" and not args.add_noqa:
        return failed
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
            problem = write_atomically(r.path, r.notebook.dumps(), r.notebook.raw, roots=roots)
        else:
            problem = write_atomically(r.path, r.fixed_text, r.original_text, r.decoded, roots=roots)
        if problem:
            print(f"{printable(r.path)}: {problem}", file=sys.stderr)
            failed = True
            r.applied = r.noqa_added = 0
            r.applied_codes.clear()
            if r.unfixed_findings is not None:  # nothing was fixed: report what is still in the file
                r.findings, r.fixed_text = r.unfixed_findings, None
        elif args.silent:
            continue
        elif args.add_noqa and fix_mode == "none":
            print(f"{printable(r.path)}：添加了 {r.noqa_added} 条 noqa 注释" if lang == "zh"
                  else f"{printable(r.path)}: added {r.noqa_added} noqa comment(s)", file=sys.stderr)
        elif not args.quiet:
            print(f"{printable(r.path)}：修复了 {r.applied} 个问题" if lang == "zh"
                  else f"{printable(r.path)}: fixed {r.applied} finding(s)", file=sys.stderr)
    return failed


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
        print(format_json(results, unused), file=stream)
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

exit status: 0 no problems; 1 problems reported (findings, or code that could not be analysed);
2 only when nothing could be reported for a path (unreadable, internal error) or the configuration is
wrong. --exit-zero turns 1 into 0.
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
    out.add_argument("--exit-zero", action="store_true", help="exit 0 even when problems are reported (unreadable paths and errors still exit 2)")
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
    sub.add_parser("agent", help="make coding agents run gradguard: `agent init` (skill, AGENTS.md, Stop-hook "
                                 "recipes), `agent hook` (the Stop hook)", add_help=False)
    return parser


# What `gradguard server` imports beyond the checker (the `lsp` extra; a CLI-only install goes without).
LSP_MODULES = ("pygls", "lsprotocol", "jedi")


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    # Subcommands that own their arguments.
    if argv and argv[0] in ("server", "trace", "explain", "mcp", "agent"):
        command, rest = argv[0], argv[1:]
        if command == "agent":
            from .agent_loop import main as agent_main
            return agent_main(rest)
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
