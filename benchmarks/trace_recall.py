"""How often `gradguard trace` names the bug line, and whether it stays quiet on correct programs.

Programs (globbed when run, so the numbers cover what exists):

* ``tests/real_world/manifests/*.toml``: ``kind = "bug"`` programs in ``tests/real_world/bugs/`` with their
  ``bug_lines``, ``kind = "correct"`` programs in ``tests/real_world/correct/``;
* ``server/gradguard/rules/examples/GG*/bad_*.py`` (bug lines marked ``# <- GGnnn``) and ``good_*.py``.

Each program runs once under the tracer exactly as ``gradguard trace`` runs it (``run_program``), in a
forked child of one process that has imported torch (isolation without paying the import per program), in
a scratch working directory, with stderr captured. A bug counts as *named* when one of its bug lines is a
line the tracer's finding cites in that file (the write, the line that raised, the backward that freed the
graph, the state carried without detach()). The scorer also checks that no tracer frame
(``torch/overrides.py``, ``__torch_function__``, ``gradguard/trace/``) reaches the printed traceback,
that each finding's full report is printed once, and that findings cite no file but the program ("foreign":
the code that runs the program, such as this scorer or the console script, is never a call site).

    python benchmarks/trace_recall.py [--json] [--only SUBSTRING] [--corpus real_world|rule_examples] [--verbose]
"""
from __future__ import annotations

import argparse
import ast
import io
import json
import os
import re
import shutil
import signal
import sys
import tempfile
import tomllib
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "server"))

TRACER_FRAMES = ("torch/overrides.py", "__torch_function__", "gradguard/trace/")
TIMEOUT_S = 60


def programs(root: Path = ROOT) -> list[dict]:
    """Every program to score: {id, path, kind ("bug" | "correct"), family, bug_lines, corpus}."""
    out = []
    real = root / "tests" / "real_world"
    for manifest in sorted((real / "manifests").glob("*.toml")):
        try:
            entries = tomllib.loads(manifest.read_text(encoding="utf-8")).get("program", [])
        except (OSError, tomllib.TOMLDecodeError):
            continue
        for entry in entries:
            kind = entry.get("kind")
            folder = "bugs" if kind == "bug" else "correct"
            path = real / folder / f"{entry.get('id')}.py"
            if kind in ("bug", "correct") and path.is_file():
                out.append({"id": entry["id"], "path": str(path), "kind": kind, "family": entry.get("family", ""),
                            "bug_lines": [int(n) for n in entry.get("bug_lines", [])], "corpus": "real_world"})
    for path in sorted((root / "server" / "gradguard" / "rules" / "examples").glob("GG*/*.py")):
        if path.name.startswith("bad_"):
            lines = [n for n, text in enumerate(path.read_text().splitlines(), 1) if re.search(r"#\s*<-\s*GG\d+", text)]
            out.append({"id": f"{path.parent.name}/{path.stem}", "path": str(path), "kind": "bug",
                        "family": path.parent.name, "bug_lines": lines, "corpus": "rule_examples"})
        elif path.name.startswith("good_"):
            out.append({"id": f"{path.parent.name}/{path.stem}", "path": str(path), "kind": "correct",
                        "family": path.parent.name, "bug_lines": [], "corpus": "rule_examples"})
    return out


def _named_lines(finding: dict, path: str) -> set[int]:
    """The lines a finding points the user at as the bug (not the save line: that is where the tensor was
    saved, not what to change)."""
    lines = set()
    for role in ("write", "raised", "freed_by", "backward", "carry", "module", "created"):
        site = finding.get(role)
        if isinstance(site, dict) and os.path.realpath(site.get("file", "")) == os.path.realpath(path):
            lines.add(site.get("line"))
            lines.add(site.get("inference_mode_line"))
        # The call sites that led to a write or a backward() done inside a helper (`update_params()`),
        # printed under the line as "called from ...".
        for caller in (site.get("callers") or []) if isinstance(site, dict) else []:
            if os.path.realpath(caller.get("file", "")) == os.path.realpath(path):
                lines.add(caller.get("line"))
    return lines


def _cited_files(finding: dict) -> set[str]:
    """Every file a finding names (its sites and their call sites)."""
    files = set()
    for value in finding.values():
        if isinstance(value, dict) and value.get("file"):
            files.add(value["file"])
            files |= {c.get("file", "") for c in value.get("callers") or ()}
    return files


_COMPOUND = (ast.For, ast.AsyncFor, ast.While, ast.If, ast.With, ast.AsyncWith, ast.Try, ast.FunctionDef,
             ast.AsyncFunctionDef, ast.ClassDef) + ((ast.TryStar,) if hasattr(ast, "TryStar") else ()) + \
            ((ast.Match,) if hasattr(ast, "Match") else ())


def statement_lines(path: str) -> dict[int, range]:
    """line -> the lines of the simple statement holding it: a call written over several lines is one
    place (Python reports the line of the instruction running, the manifest may mark another of them)."""
    try:
        tree = ast.parse(Path(path).read_text(encoding="utf-8"))
    except (OSError, SyntaxError, ValueError):
        return {}
    spans: dict[int, range] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.stmt) and not isinstance(node, _COMPOUND):
            span = range(node.lineno, (node.end_lineno or node.lineno) + 1)
            for line in span:
                if line not in spans or len(span) < len(spans[line]):
                    spans[line] = span
    return spans


def run_one(path: str) -> dict:
    """Run one program under the tracer in a forked child; the child's findings and stderr."""
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # child
        os.close(read_fd)
        result: dict = {}
        scratch = None
        try:
            signal.alarm(TIMEOUT_S)
            from gradguard.trace.cli import main as trace_main

            scratch = tempfile.mkdtemp(prefix="gg-recall-")
            os.chdir(scratch)
            err, out = io.StringIO(), io.StringIO()
            with redirect_stderr(err), redirect_stdout(out):
                # `gradguard trace PATH`, in English whatever the locale (the report markers counted below are English)
                status = trace_main(["--lang", "en", "--output", "trace.json", path])
            with open("trace.json", encoding="utf-8") as fh:
                findings = json.load(fh)["findings"]
            result = {"status": status, "stderr": err.getvalue(), "findings": findings}
        except BaseException as exc:  # noqa: BLE001 - report whatever happened
            result = {"status": -1, "stderr": f"scorer: {exc!r}", "findings": []}
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)
        with os.fdopen(write_fd, "w") as fh:
            json.dump(result, fh)
        os._exit(0)
    os.close(write_fd)
    with os.fdopen(read_fd) as fh:
        data = fh.read()
    os.waitpid(pid, 0)
    try:
        return json.loads(data)
    except ValueError:
        return {"status": -1, "stderr": "scorer: child died", "findings": []}


def score(items: list[dict], verbose: bool = False) -> dict:
    rows = []
    for item in items:
        res = run_one(item["path"])
        named = set()
        for finding in res["findings"]:
            named |= _named_lines(finding, item["path"])
        spans = statement_lines(item["path"])
        named_spans = set(named)
        for line in named:
            named_spans |= set(spans.get(line, ()))
        leaked = [marker for marker in TRACER_FRAMES if marker in res["stderr"]]
        # A finding may only cite the program (every program here is one file): never the code that runs it
        # (the console script, this scorer).
        foreign = sorted({f for finding in res["findings"] for f in _cited_files(finding)
                          if os.path.realpath(f) != os.path.realpath(item["path"])})
        # Full reports start with "gradguard trace: error [" or, for silent writes, "warning [silent-write]: <shape>
        # <dtype> tensor saved for ..."; brief warnings at the write are "warning [kind]: <op> at <line> ...".
        full_reports = (res["stderr"].count("gradguard trace: error [")
                        + sum(1 for line in res["stderr"].splitlines()
                              if line.startswith("gradguard trace: warning [silent-write]: ")
                              and " tensor saved for " in line and " was overwritten at " in line))
        row = {**item, "status": res["status"], "kinds": [f["kind"] for f in res["findings"]],
               "named_lines": sorted(n for n in named if n is not None),
               "named": bool(named_spans & set(item["bug_lines"])), "leaked_frames": leaked, "foreign_files": foreign,
               "reports": full_reports, "findings": len(res["findings"])}
        rows.append(row)
        if verbose:
            mark = ("ok " if row["named"] else "MISS") if item["kind"] == "bug" else ("ok " if not row["findings"] else "FP  ")
            print(f"{mark} {item['id']:<48} bug={item['bug_lines']} named={row['named_lines']} "
                  f"kinds={row['kinds']} leaked={leaked}", file=sys.stderr)
            if verbose and mark.strip() != "ok":
                print("     " + res["stderr"][-1500:].replace("\n", "\n     "), file=sys.stderr)
    summary = {}
    for corpus in sorted({r["corpus"] for r in rows}) + ["all"]:
        sel = [r for r in rows if corpus == "all" or r["corpus"] == corpus]
        bugs = [r for r in sel if r["kind"] == "bug"]
        good = [r for r in sel if r["kind"] == "correct"]
        summary[corpus] = {
            "bugs": len(bugs), "named": sum(r["named"] for r in bugs),
            "recall": round(sum(r["named"] for r in bugs) / len(bugs), 3) if bugs else None,
            "correct": len(good), "correct_with_findings": sum(1 for r in good if r["findings"]),
            "tracer_frames_shown": sum(1 for r in sel if r["leaked_frames"]),
            "findings_citing_other_files": sum(1 for r in sel if r["foreign_files"]),
            "findings_reported_more_than_once": sum(1 for r in sel if r["reports"] > r["findings"]),
        }
    return {"summary": summary, "rows": rows}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--only", default="", help="score only programs whose id contains this")
    parser.add_argument("--corpus", choices=("real_world", "rule_examples"), help="score only this corpus")
    parser.add_argument("--verbose", action="store_true", help="one line per program on stderr")
    opts = parser.parse_args(argv)
    import torch  # noqa: F401 - imported once, before forking

    torch.set_num_threads(1)  # no intra-op thread pool in the parent: forking stays safe
    items = [p for p in programs() if opts.only in p["id"] and (opts.corpus is None or p["corpus"] == opts.corpus)]
    result = score(items, opts.verbose)
    if opts.json:
        print(json.dumps(result, indent=2))
        return 0
    print(f"{'corpus':<15}{'bugs':>6}{'named':>7}{'recall':>8}{'correct':>9}{'FP progs':>10}{'frames':>8}{'repeats':>9}"
          f"{'foreign':>9}")
    for corpus, s in result["summary"].items():
        recall = "-" if s["recall"] is None else f"{s['recall']:.3f}"
        print(f"{corpus:<15}{s['bugs']:>6}{s['named']:>7}{recall:>8}{s['correct']:>9}"
              f"{s['correct_with_findings']:>10}{s['tracer_frames_shown']:>8}{s['findings_reported_more_than_once']:>9}"
              f"{s['findings_citing_other_files']:>9}")
    misses = [r["id"] for r in result["rows"] if r["kind"] == "bug" and not r["named"]]
    fps = [r["id"] for r in result["rows"] if r["kind"] == "correct" and r["findings"]]
    if misses:
        print("not named: " + ", ".join(misses))
    if fps:
        print("findings on correct programs: " + ", ".join(fps))
    foreign = [f"{r['id']} ({', '.join(r['foreign_files'])})" for r in result["rows"] if r["foreign_files"]]
    if foreign:
        print("findings citing another file than the program: " + "; ".join(foreign))
    return 0


if __name__ == "__main__":
    sys.exit(main())
