"""The analysis of one keystroke in timm's vision_transformer.py, this tree against another commit, side by side.

    .venv/bin/python benchmarks/bench_edit_ab.py --base e023f01 [--edits 60]

Two worker processes, one per tree (the base is `git archive`d into a temporary directory), each hold a warm
editor Engine on the file and take the same one-digit edits (bench_lsp's TIMM_EDITS) in turn: edit k goes to the
base, then to this tree, then edit k+1. Each reports the CPU milliseconds of `Engine.check`. The machine's speed
drifts by a factor of two within minutes here, so only edits measured side by side are compared: the table gives
each tree's median and the median of the per-edit ratios.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def worker(case: int) -> None:
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import bench_lsp
    from gradguard.config import Config
    from gradguard.engine import Engine

    _label, text = bench_lsp.timm_vision_transformer()
    _name, head, line_text, digit_after = bench_lsp.TIMM_EDITS[case]
    line, col = bench_lsp.timm_target(text, head, line_text, digit_after)
    lines = text.split("\n")
    engine, config, path = Engine(), Config(), str(Path(tempfile.gettempdir()) / "vision_transformer.py")
    engine.check(text, path, config)
    for request in sys.stdin:
        k = int(request)
        edited = lines[:]
        edited[line] = edited[line][:col] + str(k % 10) + edited[line][col + 1:]
        started = time.process_time()
        engine.check("\n".join(edited), path, config)
        print(json.dumps((time.process_time() - started) * 1000), flush=True)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--base", default="HEAD~1", help="the commit to compare with (default HEAD~1)")
    parser.add_argument("--edits", type=int, default=60)
    parser.add_argument("--worker", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker is not None:
        worker(args.worker)
        return 0
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import bench_lsp

    with tempfile.TemporaryDirectory() as tmp:
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", args.base, "server"], check=True,
                                 capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", tmp], input=archive, check=True)
        trees = {args.base: str(Path(tmp) / "server"), "this tree": str(ROOT / "server")}
        for case, (name, *_rest) in enumerate(bench_lsp.TIMM_EDITS):
            workers = {label: subprocess.Popen([sys.executable, __file__, "--worker", str(case)], text=True,
                                               stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                               env={**os.environ, "PYTHONPATH": path})
                       for label, path in trees.items()}
            spent = {label: [] for label in trees}
            for k in range(args.edits):
                for label, proc in workers.items():
                    proc.stdin.write(f"{k}\n")
                    proc.stdin.flush()
                    spent[label].append(json.loads(proc.stdout.readline()))
            for proc in workers.values():
                proc.stdin.close()
                proc.wait()
            base, new = spent.values()
            medians = "  ".join(f"{label} {statistics.median(v):.1f} ms" for label, v in spent.items())
            ratio = statistics.median(b / a for a, b in zip(base, new))
            print(f"{name}: {medians}  (median per-edit ratio {ratio:.2f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
