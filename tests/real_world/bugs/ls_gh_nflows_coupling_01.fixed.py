"""RealNVP-style normalizing flow on the two-moons distribution.

Affine coupling layers alternate which half is transformed; the model is trained by
maximum likelihood and evaluated by the average log-density on held-out points.
"""
import argparse
import logging
import math
import os
import random
import shutil
import tempfile
import time

import torch
import torch.nn as nn

logger = logging.getLogger("realnvp")

# ----------------------------------------------------------------------------- utilities
def setup_logging(level=logging.WARNING):
    logging.basicConfig(level=level, format="%(asctime)s | %(name)s | %(levelname)s | %(message)s")


def seed_everything(seed):
    random.seed(seed)
    torch.manual_seed(seed)


class AverageMeter:
    """Running average of a scalar (loss, accuracy, ...)."""

    def __init__(self, name):
        self.name = name
        self.reset()

    def reset(self):
        self.sum, self.count = 0.0, 0

    def update(self, value, n=1):
        self.sum += float(value) * n
        self.count += n

    @property
    def avg(self):
        return self.sum / self.count if self.count else 0.0

    def __str__(self):
        return f"{self.name} {self.avg:.4f}"


class CheckpointSaver:
    """Keeps the best `keep` checkpoints (by a metric) in a directory."""

    def __init__(self, directory=None, keep=2, mode="max"):
        self.directory = directory or tempfile.mkdtemp(prefix="ckpt_")
        self.keep, self.mode = keep, mode
        self.saved = []

    def save(self, state, metric, epoch):
        path = os.path.join(self.directory, f"checkpoint_{epoch:03d}.pt")
        torch.save(state, path)
        self.saved.append((metric, path))
        self.saved.sort(key=lambda t: t[0], reverse=self.mode == "max")
        for _, old in self.saved[self.keep:]:
            if os.path.exists(old):
                os.remove(old)
        self.saved = self.saved[:self.keep]
        return path

    def cleanup(self):
        shutil.rmtree(self.directory, ignore_errors=True)


class Timer:
    def __enter__(self):
        self.start = time.perf_counter()
        return self

    def __exit__(self, *exc):
        self.elapsed = time.perf_counter() - self.start


def two_moons(n, noise, seed):
    g = torch.Generator().manual_seed(seed)
    t = torch.rand(n, generator=g) * math.pi
    upper = torch.rand(n, generator=g) > 0.5
    x = torch.where(upper, torch.cos(t), 1 - torch.cos(t))
    y = torch.where(upper, torch.sin(t), 0.5 - torch.sin(t))
    data = torch.stack([x, y], dim=1)
    return data + noise * torch.randn(n, 2, generator=g)


class CouplingNet(nn.Module):
    def __init__(self, in_dim, out_dim, hidden):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(in_dim, hidden), nn.LeakyReLU(0.1),
                                 nn.Linear(hidden, hidden), nn.LeakyReLU(0.1),
                                 nn.Linear(hidden, 2 * out_dim))

    def forward(self, x):
        s, t = self.net(x).chunk(2, dim=-1)
        return torch.tanh(s), t


class AffineCoupling(nn.Module):
    def __init__(self, dim, hidden, flip):
        super().__init__()
        self.flip = flip
        self.half = dim // 2
        self.st = CouplingNet(self.half, dim - self.half, hidden)

    def forward(self, x):
        if self.flip:
            x = x.flip(-1)
        x1, x2 = x.split([self.half, x.shape[-1] - self.half], dim=-1)
        s, t = self.st(x1)
        x2 = x2 * s.exp() + t
        z = torch.cat([x1, x2], dim=-1)
        if self.flip:
            z = z.flip(-1)
        return z, s.sum(-1)


class ActNorm(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.loc = nn.Parameter(torch.zeros(dim))
        self.log_scale = nn.Parameter(torch.zeros(dim))

    def forward(self, x):
        return (x + self.loc) * self.log_scale.exp(), self.log_scale.sum().expand(x.shape[0])


class RealNVP(nn.Module):
    def __init__(self, dim=2, hidden=32, n_layers=4):
        super().__init__()
        layers = []
        for i in range(n_layers):
            layers += [ActNorm(dim), AffineCoupling(dim, hidden, flip=bool(i % 2))]
        self.layers = nn.ModuleList(layers)
        self.register_buffer("base_loc", torch.zeros(dim))

    def forward(self, x):
        log_det = torch.zeros(x.shape[0])
        for layer in self.layers:
            x, ld = layer(x)
            log_det = log_det + ld
        return x, log_det

    def log_prob(self, x):
        z, log_det = self(x)
        base = -0.5 * (z ** 2).sum(-1) - z.shape[-1] * 0.5 * math.log(2 * math.pi)
        return base + log_det


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--n-train", type=int, default=256)
    p.add_argument("--n-val", type=int, default=128)
    p.add_argument("--noise", type=float, default=0.05)
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--hidden", type=int, default=32)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--epochs", type=int, default=2)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--seed", type=int, default=3)
    args = p.parse_args([])

    setup_logging()
    seed_everything(args.seed)
    train_x = two_moons(args.n_train, args.noise, seed=1)
    val_x = two_moons(args.n_val, args.noise, seed=2)
    flow = RealNVP(2, args.hidden, args.layers)
    optimizer = torch.optim.Adam(flow.parameters(), lr=args.lr)
    saver = CheckpointSaver(keep=1)
    for epoch in range(args.epochs):
        meter = AverageMeter("nll")
        perm = torch.randperm(args.n_train)
        with Timer() as t:
            for i in range(0, args.n_train, args.batch_size):
                batch = train_x[perm[i:i + args.batch_size]]
                loss = -flow.log_prob(batch).mean()
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                meter.update(loss.item(), len(batch))
        with torch.no_grad():
            val_ll = flow.log_prob(val_x).mean().item()
        logger.info("epoch %d %s val log-lik %.3f (%.1fs)", epoch, meter, val_ll, t.elapsed)
        saver.save(flow.state_dict(), val_ll, epoch)
    saver.cleanup()


if __name__ == "__main__":
    main()
