"""How `gradguard check` grows with the size of one file: generated inputs at 100, 1,000 and 10,000.

    python benchmarks/bench_scaling.py [--sizes 100 1000 10000] [--shape NAME ...] [--mem-gb 6] [--timeout 600]

Shapes (each a realistic program with a bug in it, grown along one axis):
  loop-pairs      a training loop whose body re-binds a name and writes it by index, N pairs
                  (`h = h.exp()`, `h[0] = 0`: one GG201 per pair, a backward and a step per pass)
  loop-branches   a training loop whose body binds N names, each written under an `if` of its own
                  (`a3 = h.sigmoid()`, `if b: a3[0] = 0`, `h = h + a3`: one GG201 per name)
  layer-rows      a model whose `nn.Sequential(...)` literal has N rows of `nn.Linear(8, 8), nn.ReLU(inplace=True)`
                  (its output, saved by the last ReLU, is then written by `x += 1`) and an `nn.ModuleList([...])` of
                  N `nn.Linear` rows walked in forward (its first 4 layers run, as for any layer list)
  block-rows      a model whose `nn.ModuleList([...])` literal has N rows `Block(8)` of a same-file block class
                  (`nn.Linear` then `nn.ReLU(inplace=True)`), walked in forward, whose output is then written by
                  `x += 1`: N constructions, of which one runs `Block.__init__` (facts/summaries.py)
  literal         a module-level list literal of N floats beside a leaf written in place
  call-chain      N functions, each calling the one before it and writing its own result (`y += 1`), run on a
                  leaf that is then written in place (GG101)

Each point runs in three fresh processes, each under an address-space cap of --mem-gb: `check_one` (as
`gradguard check --no-cache` runs a file, after one small warm-up check) for the CPU seconds of the check and the
peak RSS of the process; again for the check's peak of Python allocations (tracemalloc: exact where RSS moves by
whole arenas, and it slows the check, hence a process of its own); and a bare `libcst.parse_module` of the same
text, whose growth is part of the check's. Prints one row per point and the ratio of each 10x step; targets:
<= 12x CPU time and <= 12x allocation peak per step, every point analysed (no MemoryError, no "not analysed"
note) up to 10,000. Exit status 1 when a target is missed.
"""
from __future__ import annotations

import argparse
import json
import math
import resource
import subprocess
import sys


def loop_pairs(n: int) -> str:
    lines = ["import torch", "", "w = torch.randn(8, requires_grad=True)", "opt = torch.optim.SGD([w], lr=0.1)",
             "for step in range(10):", "    opt.zero_grad()", "    h = w * 2"]
    for _ in range(n):
        lines += ["    h = h.exp()", "    h[0] = 0"]
    lines += ["    loss = h.sum()", "    loss.backward()", "    opt.step()", ""]
    return "\n".join(lines)


def loop_branches(n: int) -> str:
    # N names, each written on one arm of its own `if`: a branch used to copy and join every name of the scope.
    # Module-level statements (4 columns) so that 10,000 of them stay under the parser's 800,000-character guard.
    lines = ["import torch", "", "w = torch.randn(8, requires_grad=True)", "opt = torch.optim.SGD([w], lr=0.1)",
             "for batch in torch.randn(4, 8):", "    h = w * batch", "    b = batch.sum() > 0"]
    for i in range(n):
        lines += [f"    a{i} = h.sigmoid()", "    if b:", f"        a{i}[0] = 0", f"    h = h + a{i}"]
    lines += ["    h.sum().backward()", "    opt.step()", ""]
    return "\n".join(lines)


def layer_rows(n: int) -> str:
    # rows at the class body's indentation: 10,000 of each stay under the parser's 800,000-character block guard
    lines = ["import torch", "import torch.nn as nn", "", "", "class Net(nn.Module):", "    def __init__(self):",
             "        super().__init__()", "        self.features = nn.Sequential("]
    lines += ["    nn.Linear(8, 8), nn.ReLU(inplace=True),"] * n
    lines += ["        )", "        self.blocks = nn.ModuleList(["]
    lines += ["    nn.Linear(8, 8),"] * n
    lines += ["        ])", "", "    def forward(self, x):", "        h = x", "        for block in self.blocks:",
              "            h = block(h)", "        x = self.features(x)", "        x += 1", "        return x + h", "", "",
              "net = Net()", "out = net(torch.randn(2, 8))", "out.sum().backward()", ""]
    return "\n".join(lines)


def finding_rows(n: int) -> str:
    """N rows that each hold a finding (issue 30): `Linear, Sigmoid, ReLU(inplace=True)`, the ReLU writing what the
    Sigmoid saved; a ModuleList of N rows after them, so a walk of the class per finding shows."""
    lines = ["import torch", "import torch.nn as nn", "", "", "class Net(nn.Module):", "    def __init__(self):",
             "        super().__init__()", "        self.features = nn.Sequential("]
    lines += ["    nn.Linear(8, 8), nn.Sigmoid(), nn.ReLU(inplace=True),"] * n
    lines += ["        )", "        self.blocks = nn.ModuleList(["]
    lines += ["    nn.Linear(8, 8),"] * n
    lines += ["        ])", "", "    def forward(self, x):", "        h = x", "        for block in self.blocks:",
              "            h = block(h)", "        x = self.features(x)", "        return x + h", "", "",
              "net = Net()", "out = net(torch.randn(2, 8))", "out.sum().backward()", ""]
    return "\n".join(lines)


def rewrite_rows(n: int) -> str:
    """N writes in one function, each with a GG201 finding whose fix re-binds the name (`x = x.mul(2)`): the proof
    that the re-binding is unobservable walked the function once per finding (issue 30)."""
    lines = ["import torch", "", "", "def step(w):", "    h = w * 2"]
    lines += ["    x = h * 1", "    h = h + x.sin()", "    x.mul_(2)"] * n
    lines += ["    h.sum().backward()", "", "", "step(torch.randn(8, requires_grad=True))", ""]
    return "\n".join(lines)


def block_rows(n: int) -> str:
    lines = ["import torch", "import torch.nn as nn", "", "", "class Block(nn.Module):", "    def __init__(self, dim):",
             "        super().__init__()", "        self.fc = nn.Linear(dim, dim)", "        self.act = nn.ReLU(inplace=True)",
             "", "    def forward(self, x):", "        return self.act(self.fc(x))", "", "",
             "class Net(nn.Module):", "    def __init__(self):", "        super().__init__()",
             "        self.blocks = nn.ModuleList(["]
    lines += ["    Block(8),"] * n
    lines += ["        ])", "", "    def forward(self, x):", "        for block in self.blocks:", "            x = block(x)",
              "        x += 1", "        return x", "", "", "net = Net()", "out = net(torch.randn(2, 8))",
              "out.sum().backward()", ""]
    return "\n".join(lines)


def literal(n: int) -> str:
    table = ", ".join(f"{i * 7 % 1000}.5" for i in range(n))
    return (f"import torch\n\nTABLE = [{table}]\n\n\ndef scale(x):\n    return x * TABLE[0]\n\n\n"
            "w = torch.randn(3, requires_grad=True)\ny = scale(w).exp()\ny.add_(1)\ny.sum().backward()\n")


def call_chain(n: int) -> str:
    lines = ["import torch", "", "", "def f0(x):", "    return x.exp()", ""]
    for i in range(1, n):
        lines += [f"def f{i}(x):", f"    y = f{i - 1}(x) * 2", "    y += 1", "    return y", ""]
    lines += ["w = torch.randn(3, requires_grad=True)", f"out = f{n - 1}(w)", "w.add_(1)", "out.sum().backward()", ""]
    return "\n".join(lines)


SHAPES = {"loop-pairs": loop_pairs, "loop-branches": loop_branches, "layer-rows": layer_rows,
          "finding-rows": finding_rows, "rewrite-rows": rewrite_rows,
          "block-rows": block_rows, "literal": literal, "call-chain": call_chain}

# As `gradguard check --no-cache FILE` runs one file (imports done before the clock starts).
CHILD = r"""
import json, resource, sys, time
from gradguard.cli import check_one
from gradguard.config import Config

trace = sys.argv[1] == "trace"
text = sys.stdin.read()
if sys.argv[1] == "bare":
    import libcst
    libcst.parse_module("x = 1\n")
    start = time.process_time()
    libcst.parse_module(text)
    print(json.dumps({"seconds": time.process_time() - start, "notes": [], "error": ""}))
    sys.exit(0)
config = Config()
# the first check loads the rules, the op table and libcst's parser: not part of what grows with N
check_one("warm.py", "import torch\nw = torch.ones(2, requires_grad=True)\nw.add_(1)\n", config, "en", "none", 1 << 20)
def rss_kb():
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmRSS:"))


before = rss_kb()
if trace:
    import tracemalloc
    tracemalloc.start()
start = time.process_time()
result = check_one("scaling.py", text, config, "en", "none", 10 * 1024 * 1024)
spent = time.process_time() - start
traced = tracemalloc.get_traced_memory()[1] if trace else 0
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"seconds": spent, "peak_kb": peak, "rss_growth_kb": max(peak - before, 0),
                  "traced_kb": traced / 1024, "findings": len(result.findings),
                  "notes": [n.message for n in result.notes], "error": result.error}))
"""


def run_child(mode: str, text: str, mem_gb: float, timeout: float) -> dict:
    limit = int(mem_gb * 1024 ** 3)

    def cap():
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    try:
        proc = subprocess.run([sys.executable, "-c", CHILD, mode], input=text.encode(), capture_output=True,
                              timeout=timeout, preexec_fn=cap)
    except subprocess.TimeoutExpired:
        return {"outcome": f"timeout (> {timeout:.0f} s)"}
    if proc.returncode != 0:
        tail = (proc.stderr.decode(errors="replace").strip().splitlines() or ["?"])[-1]
        return {"outcome": "MemoryError" if "MemoryError" in tail else f"exit {proc.returncode}: {tail[:80]}"}
    out = json.loads(proc.stdout)
    if out["error"]:
        out["outcome"] = f"error: {out['error'][:60]}"
    elif any(not _budget_note(note) for note in out["notes"]):
        out["outcome"] = f"note: {out['notes'][0][:60]}"
    else:  # a spent analysis budget is measured too (its note says where; the rest ran with loops once)
        out["outcome"] = "ok, budget note" if out["notes"] else "ok"
    return out


def _budget_note(message: str) -> bool:
    return message.startswith(("the analysis budget", "calls nested more than"))


def run_point(text: str, mem_gb: float, timeout: float) -> dict:
    timed = run_child("time", text, mem_gb, timeout)
    if not timed["outcome"].startswith("ok"):
        return timed
    traced = run_child("trace", text, mem_gb, timeout * 3)
    if not traced["outcome"].startswith("ok"):
        return traced
    bare = run_child("bare", text, mem_gb, timeout)
    return {**timed, "traced_kb": traced["traced_kb"], "bare_seconds": bare.get("seconds")}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 1000, 10000])
    parser.add_argument("--shape", choices=sorted(SHAPES), action="append")
    parser.add_argument("--mem-gb", type=float, default=6.0)
    parser.add_argument("--timeout", type=float, default=600.0)
    args = parser.parse_args()
    failed = False
    print("| shape | N | chars | outcome | findings | CPU s | bare parse s | peak RSS MB | RSS growth MB "
          "| allocation peak MB | time x | bare parse x | allocation x | RSS growth x |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for name in args.shape or list(SHAPES):
        previous = None
        for n in args.sizes:
            text = SHAPES[name](n)
            point = run_point(text, args.mem_gb, args.timeout)
            if not point["outcome"].startswith("ok"):
                failed = True
                print(f"| {name} | {n:,} | {len(text):,} | {point['outcome']} |" + " |" * 10, flush=True)
                previous = None
                continue
            ratios = ["", "", "", ""]
            if previous is not None:
                # per 10x step (a step of another factor is scaled to 10x as a power law)
                steps = math.log10(n / previous["n"])
                t = (point["seconds"] / previous["seconds"]) ** (1 / steps)
                m = (point["traced_kb"] / max(previous["traced_kb"], 1)) ** (1 / steps)
                b = (point["bare_seconds"] / max(previous["bare_seconds"], 1e-6)) ** (1 / steps)
                ratios = [f"{t:.1f}", f"{b:.1f}", f"{m:.1f}", ""]
                if previous["rss_growth_kb"] >= 10 * 1024:  # below that, whole arenas and the allocator decide
                    r = (point["rss_growth_kb"] / previous["rss_growth_kb"]) ** (1 / steps)
                    ratios[3] = f"{r:.1f}"
                if t > 12 or m > 12:
                    failed = True
            print(f"| {name} | {n:,} | {len(text):,} | {point['outcome']} | {point['findings']} | {point['seconds']:.2f} | "
                  f"{point['bare_seconds']:.2f} | "
                  f"{point['peak_kb'] / 1024:.0f} | {point['rss_growth_kb'] / 1024:.1f} | {point['traced_kb'] / 1024:.1f} | "
                  f"{' | '.join(ratios)} |",
                  flush=True)
            previous = {"n": n, **point}
    print("targets: each 10x step <= 12x CPU time and <= 12x allocation peak; every point analysed. `bare parse` is "
          "libcst.parse_module alone on the same text (its own growth is part of the check's); the RSS growth "
          "ratio, shown where the smaller point grew by 10 MB or more, includes libcst's native parser, which "
          "tracemalloc does not see")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
