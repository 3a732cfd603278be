"""`gradguard check`'s analysis of all of timm, this tree against another, side by side.

    python benchmarks/bench_batch_ab.py <other tree's server/> [--rounds 4]

Two workers, one per tree, each check every timm file with a batch Engine once per round, in turn (this machine's
speed drifts within minutes: only rounds measured side by side are compared). Prints each round's CPU seconds and
the median per-round ratio (this tree / the other).
"""
from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WORKER = r'''
import glob, sys, time
sys.path.insert(0, sys.argv[1])
from gradguard.engine import Engine, decode_source
files = sorted(glob.glob(sys.argv[2] + "/**/*.py", recursive=True))
texts = [(f, decode_source(open(f, "rb").read())) for f in files]
for _ in sys.stdin:
    engine = Engine(editor=False)
    start = time.process_time()
    for f, text in texts:
        engine.check(text, f)
    print(time.process_time() - start, flush=True)
'''


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("other", help="the other tree's server/ folder (e.g. a `git worktree` of a commit)")
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--corpus", default=str(ROOT / ".corpus/timm-1.0.31/timm"))
    args = parser.parse_args()
    trees = [args.other, str(ROOT / "server")]
    workers = [subprocess.Popen([sys.executable, "-c", WORKER, tree, args.corpus], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, text=True) for tree in trees]
    rounds: list[list[float]] = [[], []]
    for _ in range(args.rounds):
        for i, worker in enumerate(workers):
            worker.stdin.write("go\n")
            worker.stdin.flush()
            rounds[i].append(float(worker.stdout.readline()))
    for worker in workers:
        worker.stdin.close()
        worker.wait()
    print("other     ", [round(x, 2) for x in rounds[0]])
    print("this tree ", [round(x, 2) for x in rounds[1]])
    print("median ratio", round(statistics.median(b / a for a, b in zip(*rounds)), 3))


if __name__ == "__main__":
    main()
