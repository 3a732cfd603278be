"""Hostile inputs through the engine, one child process each: wall time, peak RSS and outcome.

    python benchmarks/hostile_inputs.py [--mem-gb 4] [--timeout 60] [--shape NAME ...] [--scale 1.0]

Each shape of tests/hostile_inputs.py, at the size that crashed or exhausted the process before the guard,
is checked by `Engine().check()` on a worker thread (as the server runs it) in a child limited to --mem-gb of address space and --timeout seconds.
Outcome: "ok" with the finding after the hostile block reported or not, and the "not analysed" notes;
"SIGSEGV" (libcst's native parser overflowed the stack), "out of memory", or "timeout". Prints a markdown
table (input, size, outcome, seconds, peak MB).
"""
from __future__ import annotations

import argparse
import json
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))

from hostile_inputs import CRASH_SIZES, FOLLOWER_FINDING, program  # noqa: E402

# As the language server runs it: on a worker thread (its C stack is where libcst overflowed).
CHILD = r"""
import concurrent.futures, json, resource, sys, time
from gradguard.engine import Engine
text = sys.stdin.read()
t = time.perf_counter()
with concurrent.futures.ThreadPoolExecutor(1) as pool:
    report = pool.submit(Engine().check, text, "hostile.py").result()
print(json.dumps({
    "seconds": time.perf_counter() - t,
    "codes": [f.code for f in report.findings],
    "notes": [n.message for n in report.parse_notes],
    "peak_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
}))
"""


def run_one(text: str, mem_gb: float, timeout: float) -> dict:
    limit = int(mem_gb * 1024**3)

    def cap():
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    started = time.perf_counter()
    try:
        proc = subprocess.run([sys.executable, "-c", CHILD], input=text.encode(), capture_output=True,
                              timeout=timeout, preexec_fn=cap)
    except subprocess.TimeoutExpired:
        return {"outcome": f"timeout (> {timeout:.0f} s)", "seconds": timeout, "peak_mb": None}
    wall = time.perf_counter() - started
    if proc.returncode < 0:
        name = signal.Signals(-proc.returncode).name
        return {"outcome": name, "seconds": wall, "peak_mb": None}
    if proc.returncode != 0:
        tail = proc.stderr.decode(errors="replace").strip().splitlines()[-1:] or ["?"]
        if "MemoryError" in tail[0]:
            return {"outcome": f"out of memory (> {mem_gb:g} GB)", "seconds": wall, "peak_mb": None}
        return {"outcome": f"exit {proc.returncode}: {tail[0][:60]}", "seconds": wall, "peak_mb": None}
    result = json.loads(proc.stdout)
    found = FOLLOWER_FINDING in result["codes"]
    note = next((n for n in result["notes"]), None)
    outcome = ("rest analysed" if found else "findings lost") + (f"; note: {note[:70]}" if note else "; no note")
    return {"outcome": outcome, "seconds": result["seconds"], "peak_mb": result["peak_kb"] / 1024}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mem-gb", type=float, default=4)
    parser.add_argument("--timeout", type=float, default=60)
    parser.add_argument("--scale", type=float, default=1.0, help="multiply every size")
    parser.add_argument("--shape", action="append", help="only these shapes")
    parser.add_argument("--json", help="also write the results here")
    args = parser.parse_args()
    shapes = args.shape or list(CRASH_SIZES)
    rows = []
    print("| input | size | outcome | s | peak MB |\n| --- | ---: | --- | ---: | ---: |", flush=True)
    for shape in shapes:
        n = max(1, int(CRASH_SIZES[shape] * args.scale))
        text = program(shape, n)
        result = run_one(text, args.mem_gb, args.timeout)
        rows.append({"shape": shape, "n": n, "bytes": len(text.encode()), **result})
        peak = f"{result['peak_mb']:.0f}" if result["peak_mb"] is not None else "–"
        print(f"| {shape} | {n:,} | {result['outcome']} | {result['seconds']:.1f} | {peak} |", flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
