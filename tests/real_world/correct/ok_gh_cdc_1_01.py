"""DDPM on a 2-D toy distribution (eight Gaussians) with a residual MLP denoiser.

Trains the epsilon-prediction objective with a linear beta schedule, then draws a few
samples with ancestral sampling as a smoke test.
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
import torch.nn.functional as F

logger = logging.getLogger("ddpm2d")

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


def eight_gaussians(n, seed):
    g = torch.Generator().manual_seed(seed)
    idx = torch.randint(0, 8, (n,), generator=g)
    angles = idx.float() * (2 * math.pi / 8)
    centers = torch.stack([torch.cos(angles), torch.sin(angles)], dim=1) * 2
    return centers + 0.1 * torch.randn(n, 2, generator=g)


def timestep_embedding(t, dim):
    half = dim // 2
    freqs = torch.exp(-math.log(10000) * torch.arange(half).float() / half)
    args = t.float()[:, None] * freqs[None]
    return torch.cat([torch.sin(args), torch.cos(args)], dim=-1)


class ResBlock(nn.Module):
    def __init__(self, dim, temb_dim, dropout=0.1):
        super().__init__()
        self.fc = nn.Linear(dim, dim)
        self.temb = nn.Linear(temb_dim, dim)
        self.act = nn.ReLU()
        self.drop = nn.Dropout(dropout) if dropout > 0 else nn.Identity()
        self.skip = nn.Linear(dim, dim)

    def forward(self, x, temb):
        h = self.fc(x) + self.temb(temb)
        h = self.act(h)
        h = self.drop(h)
        h += self.skip(x)
        return h


class Denoiser(nn.Module):
    def __init__(self, hidden=64, blocks=2, temb_dim=16, dropout=0.1):
        super().__init__()
        self.temb_dim = temb_dim
        self.inp = nn.Linear(2, hidden)
        self.blocks = nn.ModuleList(ResBlock(hidden, temb_dim, dropout) for _ in range(blocks))
        self.out = nn.Linear(hidden, 2)

    def forward(self, x, t):
        temb = timestep_embedding(t, self.temb_dim)
        h = self.inp(x)
        for blk in self.blocks:
            h = blk(h, temb)
        return self.out(h)


class Diffusion:
    def __init__(self, steps=50, beta_start=1e-4, beta_end=0.05):
        self.steps = steps
        self.betas = torch.linspace(beta_start, beta_end, steps)
        self.alphas = 1 - self.betas
        self.alpha_bar = torch.cumprod(self.alphas, dim=0)

    def q_sample(self, x0, t, noise):
        ab = self.alpha_bar[t][:, None]
        return ab.sqrt() * x0 + (1 - ab).sqrt() * noise

    @torch.no_grad()
    def sample(self, model, n):
        x = torch.randn(n, 2)
        for t in reversed(range(self.steps)):
            tt = torch.full((n,), t)
            eps = model(x, tt)
            mean = (x - self.betas[t] / (1 - self.alpha_bar[t]).sqrt() * eps) / self.alphas[t].sqrt()
            x = mean + (self.betas[t].sqrt() * torch.randn_like(x) if t > 0 else 0)
        return x


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--n", type=int, default=512)
    p.add_argument("--steps", type=int, default=50)
    p.add_argument("--hidden", type=int, default=64)
    p.add_argument("--blocks", type=int, default=2)
    p.add_argument("--dropout", type=float, default=0.1)
    p.add_argument("--batch-size", type=int, default=128)
    p.add_argument("--epochs", type=int, default=2)
    p.add_argument("--lr", type=float, default=2e-3)
    p.add_argument("--ema", type=float, default=0.99)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args([])

    setup_logging()
    seed_everything(args.seed)
    data = eight_gaussians(args.n, seed=1)
    model = Denoiser(args.hidden, args.blocks, dropout=args.dropout)
    ema = Denoiser(args.hidden, args.blocks, dropout=args.dropout)
    ema.load_state_dict(model.state_dict())
    diffusion = Diffusion(args.steps)
    opt = torch.optim.Adam(model.parameters(), lr=args.lr)
    saver = CheckpointSaver(keep=1, mode="min")
    for epoch in range(args.epochs):
        meter = AverageMeter("eps_mse")
        perm = torch.randperm(args.n)
        with Timer() as timer:
            for i in range(0, args.n, args.batch_size):
                x0 = data[perm[i:i + args.batch_size]]
                t = torch.randint(0, args.steps, (x0.shape[0],))
                noise = torch.randn_like(x0)
                loss = F.mse_loss(model(diffusion.q_sample(x0, t, noise), t), noise)
                opt.zero_grad()
                loss.backward()
                opt.step()
                with torch.no_grad():
                    for pe, pm in zip(ema.parameters(), model.parameters()):
                        pe.mul_(args.ema).add_(pm, alpha=1 - args.ema)
                meter.update(loss.item(), x0.shape[0])
        samples = diffusion.sample(ema, 64)
        radius = samples.norm(dim=1).mean().item()
        logger.info("epoch %d %s sample radius %.2f (%.1fs)", epoch, meter, radius, timer.elapsed)
        saver.save({"model": model.state_dict(), "ema": ema.state_dict()}, meter.avg, epoch)
    saver.cleanup()


if __name__ == "__main__":
    main()
