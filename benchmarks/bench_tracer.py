"""Cost of `gradguard trace` against torch's own help, anomaly mode.

Two small training loops (the worst case for per-op overhead: many small ops), each run plain,
under ``torch.autograd.set_detect_anomaly(True)`` and under the tracer. Modes are interleaved
round by round so that load from other processes hits them alike; the metric is process CPU time
(``time.process_time``), the median over rounds, with one intra-op thread.

    python benchmarks/bench_tracer.py [--rounds 11] [--json]

Targets: tracer / plain <= 2.0 (issue 23: the tracer may at most double a training loop's time) and
tracer / anomaly <= 1.0.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time

import torch
from torch import nn

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "server"))
from gradguard.trace import Tracer  # noqa: E402


def mlp_loop(steps: int = 50):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 128), nn.ReLU(), nn.Linear(128, 10))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    x, y = torch.randn(32, 64), torch.randint(0, 10, (32,))

    def run():
        for _ in range(steps):
            opt.zero_grad()
            loss = nn.functional.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
    return run


def lstm_loop(steps: int = 20):
    torch.manual_seed(0)
    lstm = nn.LSTM(16, 32)
    head = nn.Linear(32, 1)
    opt = torch.optim.Adam([*lstm.parameters(), *head.parameters()], lr=1e-3)
    x, y = torch.randn(20, 8, 16), torch.randn(20, 8, 1)

    def run():
        for _ in range(steps):
            opt.zero_grad()
            out, _ = lstm(x)
            loss = nn.functional.mse_loss(head(out), y)
            loss.backward()
            opt.step()
    return run


def timed(run, mode: str) -> float:
    start = time.process_time()
    if mode == "plain":
        run()
    elif mode == "anomaly":
        with torch.autograd.set_detect_anomaly(True):
            run()
    else:
        with Tracer(emit=lambda text: None) as tracer:
            run()
        assert not tracer.findings
    return time.process_time() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=11)
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    opts = parser.parse_args(argv)
    torch.set_num_threads(1)
    modes = ("plain", "anomaly", "tracer")
    results = {}
    for name, make in (("mlp", mlp_loop), ("lstm", lstm_loop)):
        run = make()
        for mode in modes:  # warm-up: allocator, lazy imports, the tracer's per-function caches
            timed(run, mode)
        times = {mode: [] for mode in modes}
        for round_ in range(opts.rounds):
            order = modes if round_ % 2 == 0 else modes[::-1]
            for mode in order:
                times[mode].append(timed(run, mode))
        med = {mode: statistics.median(ts) for mode, ts in times.items()}
        results[name] = {
            "median_ms": {m: round(v * 1000, 2) for m, v in med.items()},
            "anomaly/plain": round(med["anomaly"] / med["plain"], 2),
            "tracer/plain": round(med["tracer"] / med["plain"], 2),
            "tracer/anomaly": round(med["tracer"] / med["anomaly"], 2),
        }
    if opts.json:
        print(json.dumps(results, indent=2))
    else:
        print(f"torch {torch.__version__}, 1 thread, median process CPU time of {opts.rounds} interleaved rounds")
        print(f"{'loop':<6}{'plain ms':>10}{'anomaly ms':>12}{'tracer ms':>11}"
              f"{'anomaly/plain':>15}{'tracer/plain':>14}{'tracer/anomaly':>16}")
        for name, r in results.items():
            m = r["median_ms"]
            print(f"{name:<6}{m['plain']:>10}{m['anomaly']:>12}{m['tracer']:>11}"
                  f"{r['anomaly/plain']:>15}{r['tracer/plain']:>14}{r['tracer/anomaly']:>16}")
        worst_plain = max(r["tracer/plain"] for r in results.values())
        print(f"target tracer/plain <= 2.0: {'met' if worst_plain <= 2.0 else 'NOT met'} (worst {worst_plain})")
        worst = max(r["tracer/anomaly"] for r in results.values())
        print(f"target tracer/anomaly <= 1.0: {'met' if worst <= 1.0 else 'NOT met'} (worst {worst})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
