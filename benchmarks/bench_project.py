"""The cost of reading a project as one program, side by side with checking its files one by one (issue 29).

    .venv/bin/python benchmarks/bench_project.py [--files 50] [--rounds 5]

Writes a synthetic training project into a temporary folder: `models/` (a package whose `__init__` re-exports its
modules' classes), `losses.py`, `data.py`, `utils.py`, more library modules, and scripts (`train_*.py`) that import
them, build a model, and run a loop with a loss and a backward. The same files are checked by two batch engines in
one process, in turn, round after round: one with the project linked (`Engine(project=True)`, today's default) and
one file by file (`project=False`). Prints each mode's median CPU seconds, the median of the per-round ratios, and
how the ratio grows with the project's size (the same run at a quarter, half and the full number of files).
"""
from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "server"))

MODEL = '''import torch
from torch import nn
import torch.nn.functional as F


class Block{i}(nn.Module):
    def __init__(self, dim=32, hidden=64, dropout=0.1):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.fc1 = nn.Linear(dim, hidden)
        self.fc2 = nn.Linear(hidden, dim)
        self.drop = nn.Dropout(dropout)

    def forward(self, x):
        h = self.fc2(self.drop(F.gelu(self.fc1(self.norm(x)))))
        return x + h


class Net{i}(nn.Module):
    def __init__(self, dim=32, depth=3):
        super().__init__()
        self.blocks = nn.ModuleList(Block{i}(dim) for _ in range(depth))
        self.head = nn.Linear(dim, 4)

    def forward(self, x):
        for blk in self.blocks:
            x = blk(x)
        return self.head(x.mean(1))
'''
LOSSES = '''import torch
import torch.nn.functional as F


def smooth_ce(logits, target, eps=0.1):
    logp = F.log_softmax(logits, dim=-1)
    nll = -logp.gather(1, target[:, None]).squeeze(1)
    return ((1 - eps) * nll - eps * logp.mean(-1)).mean()


def l2_penalty(params, weight=1e-4):
    return weight * sum(p.pow(2).sum() for p in params)
'''
DATA = '''import torch


def batches(n, batch=8, seq=6, dim=32, seed=0):
    g = torch.Generator().manual_seed(seed)
    for _ in range(n):
        yield torch.randn(batch, seq, dim, generator=g), torch.randint(0, 4, (batch,), generator=g)
'''
UTILS = '''import math


class AverageMeter:
    def __init__(self):
        self.total, self.count = 0.0, 0

    def update(self, value, n=1):
        self.total += value * n
        self.count += n

    @property
    def avg(self):
        return self.total / max(1, self.count)


def cosine_lr(step, total, base=1e-3):
    return base * 0.5 * (1 + math.cos(math.pi * step / total))
'''
SCRIPT = '''import torch

from data import batches
from losses import l2_penalty, smooth_ce
from models import Net{m}
from utils import AverageMeter, cosine_lr


def train(epochs=2):
    torch.manual_seed({i})
    model = Net{m}()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    meter = AverageMeter()
    for epoch in range(epochs):
        for step, (x, y) in enumerate(batches(4, seed=epoch)):
            for group in opt.param_groups:
                group["lr"] = cosine_lr(step, 4)
            loss = smooth_ce(model(x), y) + l2_penalty(model.parameters())
            opt.zero_grad()
            loss.backward()
            opt.step()
            meter.update(loss.item())
    return meter.avg


if __name__ == "__main__":
    print(train())
'''


def write_project(folder: Path, files: int) -> list[Path]:
    """About `files` files: a quarter model modules, a quarter scripts, the rest library modules and the package."""
    models = max(1, files // 4)
    scripts = max(1, files // 4)
    (folder / "pyproject.toml").write_text("", encoding="utf-8")
    (folder / "models").mkdir()
    exports = []
    for i in range(models):
        (folder / "models" / f"net{i}.py").write_text(MODEL.format(i=i), encoding="utf-8")
        exports.append(f"from .net{i} import Block{i}, Net{i}\n")
    (folder / "models" / "__init__.py").write_text("".join(exports), encoding="utf-8")
    (folder / "losses.py").write_text(LOSSES, encoding="utf-8")
    (folder / "data.py").write_text(DATA, encoding="utf-8")
    (folder / "utils.py").write_text(UTILS, encoding="utf-8")
    for i in range(max(0, files - models - scripts - 4)):
        (folder / f"lib{i}.py").write_text(UTILS.replace("AverageMeter", f"Meter{i}"), encoding="utf-8")
    for i in range(scripts):
        (folder / f"train_{i}.py").write_text(SCRIPT.format(i=i, m=i % models), encoding="utf-8")
    return sorted(folder.rglob("*.py"))


def check_all(engine, paths) -> float:
    start = time.process_time()
    for path in paths:
        engine.check(path.read_text(encoding="utf-8"), str(path))
    return time.process_time() - start


def measure(files: int, rounds: int) -> tuple[float, float, float, int]:
    from gradguard.engine import Engine

    with tempfile.TemporaryDirectory() as tmp:
        paths = write_project(Path(tmp), files)
        linked_runs, alone_runs, ratios = [], [], []
        for _ in range(rounds):
            alone = check_all(Engine(editor=False, project=False), paths)
            linked = check_all(Engine(editor=False, project=True), paths)
            alone_runs.append(alone)
            linked_runs.append(linked)
            ratios.append(linked / alone)
        return statistics.median(alone_runs), statistics.median(linked_runs), statistics.median(ratios), len(paths)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    print(f"{'files':>6} {'file by file (s)':>17} {'as a project (s)':>17} {'ratio':>6}")
    for files in sorted({max(8, args.files // 4), max(8, args.files // 2), args.files}):
        alone, linked, ratio, count = measure(files, args.rounds)
        print(f"{count:>6} {alone:>17.3f} {linked:>17.3f} {ratio:>6.2f}")


if __name__ == "__main__":
    main()
