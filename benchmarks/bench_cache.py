"""CPU cost of a warm `gradguard check` (every file unchanged, answered from .gradguard_cache/) against a cold one.

Copies the sources of torch.nn and torch.optim (from the installed torch) into a temporary folder and runs
`python -m gradguard check` on it as a subprocess: a cold run with an empty cache, then a warm run, per
round. CPU is the child's user + system time (resource.RUSAGE_CHILDREN), medians over the rounds.

    .venv/bin/python benchmarks/bench_cache.py [--rounds 3] [--jobs 1] [SOURCE_DIR ...]
"""
from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path


def child_cpu(cmd: list[str], cwd: Path) -> tuple[float, int, bytes]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, proc.returncode, proc.stdout


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sources", nargs="*", help="folders to copy and check (default: torch/nn and torch/optim)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--jobs", type=int, default=1)
    args = parser.parse_args()
    if args.sources:
        sources = [Path(s) for s in args.sources]
    else:
        import importlib.util

        torch_dir = Path(importlib.util.find_spec("torch").origin).parent  # found, not imported
        sources = [torch_dir / "nn", torch_dir / "optim"]
    with tempfile.TemporaryDirectory(prefix="gg-bench-cache-") as tmp:
        work = Path(tmp) / "src"
        for src in sources:
            shutil.copytree(src, work / src.name, ignore=shutil.ignore_patterns("__pycache__", "*.so"))
        files = list(work.rglob("*.py"))
        lines = sum(p.read_bytes().count(b"\n") for p in files)
        cache = Path(tmp) / "cache"
        cmd = [sys.executable, "-m", "gradguard", "check", "--jobs", str(args.jobs), "--format", "json",
               "--cache-dir", str(cache), str(work)]
        cold, warm = [], []
        for _ in range(args.rounds):
            shutil.rmtree(cache, ignore_errors=True)
            c, status_cold, out_cold = child_cpu(cmd, Path(tmp))
            w, status_warm, out_warm = child_cpu(cmd, Path(tmp))
            if (status_cold, out_cold) != (status_warm, out_warm):
                print("warm run disagrees with the cold run", file=sys.stderr)
                return 1
            cold.append(c)
            warm.append(w)
    c, w = statistics.median(cold), statistics.median(warm)
    print(f"files: {len(files)}, lines: {lines}, rounds: {args.rounds}, jobs: {args.jobs}, python {sys.version.split()[0]},"
          f" nproc {os.cpu_count()}")
    print(f"cold CPU s (empty cache): {c:.2f}  (rounds: {', '.join(f'{x:.2f}' for x in cold)})")
    print(f"warm CPU s (all cached):  {w:.2f}  (rounds: {', '.join(f'{x:.2f}' for x in warm)})")
    print(f"warm / cold: {w / c:.3f} (target <= 0.1)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
