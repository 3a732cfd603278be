"""gradguard's engine against a bare `libcst.parse_module` on the same files, side by side in one run.

Usage: python benchmarks/bench_engine.py [PATH ...]   (default: the installed torch's nn/ and optim/)
Prints CPU seconds (process time) per phase over interleaved rounds and the ratio engine / bare parse.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import libcst


def files_under(paths):
    out = []
    for p in paths:
        p = Path(p)
        out.extend(sorted(p.rglob("*.py")) if p.is_dir() else [p])
    return out


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("paths", nargs="*")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    paths = args.paths
    if not paths:
        import importlib.util

        torch_dir = Path(importlib.util.find_spec("torch").origin).parent
        paths = [torch_dir / "nn", torch_dir / "optim"]
    texts = []
    for f in files_under(paths):
        try:
            texts.append((str(f), f.read_text(encoding="utf-8")))
        except (UnicodeDecodeError, OSError):
            pass
    lines = sum(t.count("\n") + 1 for _, t in texts)
    from gradguard.engine import Engine

    def bare():
        for _, text in texts:
            try:
                libcst.parse_module(text)
            except Exception:
                pass

    def engine():
        e = Engine(editor=False)  # a fresh cache: every block is parsed, as in a `gradguard check` run
        for path, text in texts:
            e.check(text, path)

    timings = {"bare libcst.parse_module": [], "gradguard engine (cold cache)": []}
    for _ in range(args.rounds):
        for name, fn in (("bare libcst.parse_module", bare), ("gradguard engine (cold cache)", engine)):
            start = time.process_time()
            fn()
            timings[name].append(time.process_time() - start)
    print(f"files: {len(texts)}  lines: {lines}  rounds: {args.rounds}  (median CPU seconds)")
    med = {k: statistics.median(v) for k, v in timings.items()}
    for name, value in med.items():
        print(f"  {name:<34} {value:8.2f} s   {lines / value:9.0f} lines/CPU-s")
    ratio = med["gradguard engine (cold cache)"] / med["bare libcst.parse_module"]
    print(f"ratio engine / bare parse: {ratio:.2f}  (target <= 1.5)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
