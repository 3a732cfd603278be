"""The analysis grows linearly with one file's size: 10x the input costs at most 12x the work and the memory.

The inputs are the shapes of benchmarks/bench_scaling.py (which times them at 100, 1,000 and 10,000), here at
20 and 200 so the test takes seconds. Work is counted, not timed: the Python and C function calls of one check
(sys.setprofile), which are the same on every machine. Memory is tracemalloc's peak during the check. Both after
a warm-up check, so loading the rules and the op table is not counted. Before the fixes these ratios were
quadratic: a tensor's history copied per op (loop-pairs, layer-rows), the whole environment copied and joined per
`if` (loop-branches).
"""
from __future__ import annotations

import importlib.util
import sys
import tracemalloc
from pathlib import Path

import pytest

from gradguard.engine import Engine

_spec = importlib.util.spec_from_file_location(
    "bench_scaling", Path(__file__).resolve().parent.parent / "benchmarks" / "bench_scaling.py")
bench_scaling = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench_scaling)

SMALL, LARGE = 20, 200
BOUND = 12  # per 10x step, as the target for time and memory

# shape -> the findings of the program at size n (each shape is a program with a bug in it)
EXPECTED = {
    "loop-pairs": lambda n: ["GG201"] * n,
    "loop-branches": lambda n: ["GG201"] * n,
    "layer-rows": lambda n: ["GG201"],
    "finding-rows": lambda n: ["GG202"] * n,  # a finding per row: no fix may walk the file per finding
    "rewrite-rows": lambda n: ["GG201"] * n,  # nor prove each re-binding by a walk of the function
    "block-rows": lambda n: ["GG201"],
    "literal": lambda n: ["GG201"],
    "call-chain": lambda n: ["GG101"],
}

WARM_UP = "import torch\nw = torch.ones(2, requires_grad=True)\ny = w.exp()\ny.add_(1)\ny.sum().backward()\n"


def _check(text: str):
    return Engine(editor=False).check(text, "scaling.py")


def calls_of_check(text: str) -> tuple[int, list[str]]:
    _check(WARM_UP)
    count = 0

    def profile(frame, event, arg):
        nonlocal count
        if event == "call" or event == "c_call":
            count += 1

    sys.setprofile(profile)
    try:
        report = _check(text)
    finally:
        sys.setprofile(None)
    return count, [f.code for f in report.findings]


def peak_of_check(text: str) -> int:
    _check(WARM_UP)
    tracemalloc.start()
    try:
        _check(text)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("shape", sorted(EXPECTED))
def test_ten_times_the_input_costs_at_most_twelve_times_the_calls(shape):
    generate = bench_scaling.SHAPES[shape]
    small, small_codes = calls_of_check(generate(SMALL))
    large, large_codes = calls_of_check(generate(LARGE))
    assert small_codes == EXPECTED[shape](SMALL)
    assert large_codes == EXPECTED[shape](LARGE)
    assert large / small <= BOUND, f"{shape}: {small:,} calls at {SMALL}, {large:,} at {LARGE}"


@pytest.mark.parametrize("shape", sorted(EXPECTED))
def test_ten_times_the_input_takes_at_most_twelve_times_the_memory(shape):
    generate = bench_scaling.SHAPES[shape]
    small = peak_of_check(generate(SMALL))
    large = peak_of_check(generate(LARGE))
    assert large / small <= BOUND, f"{shape}: peak {small:,} bytes at {SMALL}, {large:,} at {LARGE}"
