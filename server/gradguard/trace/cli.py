"""`gradguard trace [options] script.py [args...]` / `gradguard trace [options] -m module [args...]`."""
from __future__ import annotations

import argparse
import json
import os
import runpy
import sys
import traceback

from ..fileio import ignore_folder, write_output

USAGE = "gradguard trace [--format text|json] [--lang en|zh] [--strict] [--no-write-warnings] [--eager] " \
        "[--output PATH] (script.py | -m module) [args...]"


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="gradguard trace", usage=USAGE,
        description="Run a PyTorch program with the in-place tracer installed. Reports tensors that backward "
                    "needed but an in-place write changed: the line that saved them and the line that wrote them.")
    p.add_argument("--format", choices=("text", "json"), default="text",
                   help="text: readable report on stderr (default); json: the trace document on stderr at exit")
    p.add_argument("--lang", choices=("en", "zh"),
                   help="language of the report (default: the config's `language`, else the locale)")
    p.add_argument("--strict", action="store_true",
                   help="raise instead of warning when backward reads a tensor overwritten without a version "
                        "bump (.data writes, fused optimizers)")
    p.add_argument("--no-write-warnings", action="store_true",
                   help="do not warn at the in-place write itself, only when backward uses the tensor")
    p.add_argument("--eager", action="store_true",
                   help="run torch.compile'd code eagerly (TORCH_COMPILE_DISABLE=1), so that the tracer sees it; "
                        "without it compiled code runs as compiled and is not traced")
    p.add_argument("--output", default=os.path.join(".gradguard", "trace.json"),
                   help="where to write the trace document (default: .gradguard/trace.json in the current "
                        "directory; '-' to skip)")
    p.add_argument("-m", dest="module", metavar="MODULE", help="run a library module as a script")
    p.add_argument("script", nargs="?", help="the program to run")
    return p


def _split(argv: list[str]) -> tuple[list[str], list[str]]:
    """Options for gradguard come before the program; everything from the program on is the program's."""
    takes_value = {"--format", "--lang", "--output"}
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg == "-m":
            return argv[: i + 2], argv[i + 2:]
        if arg == "--":
            return argv[:i] + argv[i + 1: i + 2], argv[i + 2:]
        if arg in takes_value:
            i += 2
            continue
        if arg.startswith("-"):
            i += 1
            continue
        return argv[: i + 1], argv[i + 1:]
    return argv, []


def main(argv: list[str]) -> int:
    """Entry point for `gradguard trace ...`; returns the traced program's exit status (2 on usage error)."""
    ours, program_args = _split(list(argv))
    parser = _parser()
    try:
        opts = parser.parse_args(ours)
    except SystemExit as exc:
        return int(exc.code or 0)
    if not opts.module and not opts.script:
        parser.print_usage(sys.stderr)
        print("gradguard trace: error: give a script or -m MODULE", file=sys.stderr)
        return 2
    if opts.script and not opts.module and not os.path.exists(opts.script):
        print(f"gradguard trace: error: {opts.script}: no such file", file=sys.stderr)
        return 2

    if opts.lang is None:
        from ..i18n import default_language

        opts.lang = default_language(os.getcwd())
    if opts.eager:  # before torch is imported: torch._dynamo reads it into its config (and child processes inherit it)
        os.environ["TORCH_COMPILE_DISABLE"] = "1"
        if "torch._dynamo" in sys.modules:
            sys.modules["torch._dynamo"].config.disable = True
    from .core import Tracer  # imports torch

    live_text = opts.format == "text"
    argv_doc = (["-m", opts.module] if opts.module else [opts.script]) + program_args
    tracer = Tracer(strict=opts.strict, warn_at_write=not opts.no_write_warnings, lang=opts.lang,
                    emit=(lambda text: print(text, file=sys.stderr, flush=True)) if live_text else (lambda text: None),
                    report_at_exit=False, compiled=not opts.eager,
                    # os._exit ends the process at once: the report comes first (the status is the program's)
                    on_os_exit=lambda status: finish(tracer, opts.format, opts.output, opts.lang, argv_doc, status))
    status = run_program(tracer, opts.script, opts.module, program_args)
    finish(tracer, opts.format, opts.output, opts.lang, argv_doc, status)
    return status


def finish(tracer, fmt: str, output: str, lang: str, argv: list[str] | None = None, status: int | None = None) -> dict:
    """After the program: each finding's full report once (after the program's own traceback), then
    the trace document to `output` ('-': not written) and, for --format json, on stderr."""
    from . import report

    texts = tracer.take_reports()  # each finding once, then what no finding covers, then what was not traced
    if fmt == "text":
        for text in texts:
            print("\n" + text, file=sys.stderr)
    doc = report.document(tracer.findings, argv, status)
    if output != "-":
        try:
            write_output(output, (json.dumps(doc, indent=2, ensure_ascii=False) + "\n").encode("utf-8"))
            if os.path.basename(os.path.dirname(os.path.abspath(output))) == ".gradguard":  # ignores itself
                ignore_folder(os.path.dirname(output), "the last `gradguard trace` run.")
        except OSError as exc:
            print(f"gradguard trace: cannot write {output}: {exc}", file=sys.stderr)
    if fmt == "json":
        print(json.dumps(doc, indent=2, ensure_ascii=False), file=sys.stderr)
    elif tracer.findings and output != "-":
        print(report.summary(len(tracer.findings), output, lang), file=sys.stderr)
    return doc


def run_program(tracer, script: str | None, module: str | None, args: list[str]) -> int:
    """Run a script or module as __main__ under `tracer`, with sys.argv/sys.path as python would set
    them; returns the exit status python would have given."""
    from .core import add_boundary

    add_boundary(run_program.__code__)  # the frames above this one (the launcher, a harness) are not the program
    saved_argv, saved_path = sys.argv[:], sys.path[:]
    try:
        if module:
            sys.argv = [module] + args  # runpy replaces argv[0] with the module's file
            sys.path.insert(0, os.getcwd())
        else:
            sys.argv = [script] + args
            sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
        try:
            with tracer:
                if module:
                    runpy.run_module(module, run_name="__main__", alter_sys=True)
                else:
                    # python gives the main script an absolute __file__ (3.9+), whatever argv[0] says
                    runpy.run_path(os.path.abspath(script), run_name="__main__")
        except SystemExit as exc:
            code = exc.code
            if code is None:
                return 0
            if isinstance(code, int):
                return code
            print(code, file=sys.stderr)
            return 1
        except KeyboardInterrupt:
            traceback.print_exc()
            return 130
        except BaseException as exc:  # the program's own error: print it as python would
            _print_user_traceback(exc)
            return 1
        return 0
    finally:
        sys.argv = saved_argv
        sys.path[:] = saved_path
        sys.stdout.flush()


def _print_user_traceback(exc: BaseException) -> None:
    """Python's traceback without gradguard's and runpy's frames (the tracer is not the program)."""
    here = os.path.dirname(os.path.abspath(__file__)) + os.sep  # gradguard/trace/
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # gradguard/cli.py, __main__.py
    te = traceback.TracebackException(type(exc), exc, exc.__traceback__)
    seen = set()
    todo = [te]
    while todo:
        item = todo.pop()
        if id(item) in seen:
            continue
        seen.add(id(item))
        kept = [f for f in item.stack if not f.filename.startswith(here) and "<frozen runpy>" not in f.filename
                and os.path.dirname(os.path.abspath(f.filename)) != package
                and not f.filename.endswith(os.sep + "runpy.py")]
        item.stack = traceback.StackSummary.from_list(kept)
        todo.extend(x for x in (item.__cause__, item.__context__) if x is not None)
    sys.stdout.flush()
    print("".join(te.format()), end="", file=sys.stderr)
