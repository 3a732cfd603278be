"""gradguard's engine against a bare `libcst.parse_module` on the same files, side by side in one run.

Usage: python benchmarks/bench_engine.py [--rounds N] [PATH ...]   (default: the installed torch's nn/ and optim/)

Two worker processes, started fresh each round, take the files in lockstep: the bare worker parses file i with
libcst and drops the module, then the gradguard worker checks file i as `gradguard check` does (`check_one`, a
fresh cold engine per round), then file i+1, and so on. Each worker reports its own process CPU time per file.

Why lockstep in two processes: on a shared machine the CPU speed drifts by 30% within a minute, so two runs one
after the other (bare, then gradguard) compare different machines; file by file they meet the same drift. And each
tool has a heap of its own: parsing in the engine's process would make the bare parse pay for the engine's live
objects at every garbage collection (a bare parse beside the engine measured up to 60% slower).
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path


def files_under(paths):
    out = []
    for p in paths:
        p = Path(p)
        out.extend(sorted(p.rglob("*.py")) if p.is_dir() else [p])
    return out


def worker(kind: str) -> None:
    """Reads file paths from stdin, one per line; answers each with the CPU seconds spent on it."""
    if kind == "bare":
        import libcst

        def run(path: str) -> None:
            try:
                libcst.parse_module(Path(path).read_bytes())
            except Exception:  # noqa: BLE001 - a file libcst cannot parse costs what it cost
                pass
    else:
        from gradguard.cli import check_one
        from gradguard.config import Config

        config = Config()

        def run(path: str) -> None:
            check_one(path, None, config, "en", "none", 10 * 1024 * 1024)
    for line in sys.stdin:
        start = time.process_time()
        run(line.rstrip("\n"))
        print(json.dumps(time.process_time() - start), flush=True)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("paths", nargs="*")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--worker", choices=("bare", "gradguard"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.worker)
        return 0
    paths = args.paths
    if not paths:
        import importlib.util

        torch_dir = Path(importlib.util.find_spec("torch").origin).parent
        paths = [torch_dir / "nn", torch_dir / "optim"]
    files = [str(f) for f in files_under(paths)]
    lines = sum(Path(f).read_bytes().count(b"\n") + 1 for f in files)
    totals: dict[str, list[float]] = {"bare libcst.parse_module": [], "gradguard check (cold)": []}
    for _ in range(args.rounds):
        workers = {name: subprocess.Popen([sys.executable, __file__, "--worker", kind], stdin=subprocess.PIPE,
                                          stdout=subprocess.PIPE, text=True)
                   for name, kind in zip(totals, ("bare", "gradguard"))}
        spent = dict.fromkeys(totals, 0.0)
        for f in files:
            for name, proc in workers.items():
                proc.stdin.write(f + "\n")
                proc.stdin.flush()
                spent[name] += json.loads(proc.stdout.readline())
        for name, proc in workers.items():
            proc.stdin.close()
            proc.wait()
            totals[name].append(spent[name])
        print("  round: " + ", ".join(f"{name} {spent[name]:.2f} s" for name in totals), flush=True)
    print(f"files: {len(files)}  lines: {lines}  rounds: {args.rounds}  (median CPU seconds, lockstep per file)")
    med = {k: statistics.median(v) for k, v in totals.items()}
    for name, value in med.items():
        print(f"  {name:<34} {value:8.2f} s   {lines / value:9.0f} lines/CPU-s")
    ratios = [g / b for b, g in zip(*totals.values())]
    print(f"ratio gradguard / bare parse: {med['gradguard check (cold)'] / med['bare libcst.parse_module']:.2f}"
          f"  (per round: {', '.join(f'{r:.2f}' for r in ratios)}; target <= 1.2, issue 21)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
