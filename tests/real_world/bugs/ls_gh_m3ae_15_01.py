"""Masked-autoencoder pre-training on multichannel 1-D signals (m3ae-style modality masking).

A learnable stem embeds the signal, random patches are replaced by a learned mask token,
and a small transformer reconstructs the original signal of the masked patches.
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

logger = logging.getLogger("mae1d")

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


def make_signals(n, channels, length, seed):
    g = torch.Generator().manual_seed(seed)
    t = torch.linspace(0, 1, length)
    f = torch.rand(n, channels, 1, generator=g) * 8 + 1
    return torch.sin(2 * math.pi * f * t) + 0.1 * torch.randn(n, channels, length, generator=g)


class MaskedSignalAE(nn.Module):
    def __init__(self, channels, dim, patch, length, depth=2, heads=2):
        super().__init__()
        self.patch = patch
        self.stem = nn.Conv1d(channels, dim, 3, padding=1)
        self.mask_token = nn.Parameter(torch.zeros(dim, 1))
        n_patches = length // patch
        self.pos = nn.Parameter(torch.randn(1, n_patches, dim * patch) * 0.02)
        layer = nn.TransformerEncoderLayer(dim * patch, heads, 2 * dim * patch, dropout=0.0, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, depth)
        self.decoder = nn.Linear(dim * patch, channels * patch)

    def forward(self, x, mask_ratio):
        b, c, length = x.shape
        h = self.stem(x)                                    # (b, dim, L)
        with torch.no_grad():
            # patch view of the embedded signal and the random patch mask: bookkeeping only
            patches = h.unfold(2, self.patch, self.patch)
            n = length // self.patch
            mask = torch.rand(b, n) < mask_ratio
        # (b, dim, n, patch): replace masked patches by the learned token
        patches[mask.unsqueeze(1).expand(-1, patches.shape[1], -1)] = 0.0
        patches += self.mask_token[:, :, None] * mask[:, None, :, None]
        tokens = patches.permute(0, 2, 1, 3).reshape(b, n, -1) + self.pos
        recon = self.decoder(self.encoder(tokens)).view(b, n, c, self.patch)
        target = x.unfold(2, self.patch, self.patch).permute(0, 2, 1, 3)
        loss = F.mse_loss(recon[mask], target[mask]) if mask.any() else recon.sum() * 0
        return loss, recon


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--n", type=int, default=64)
    p.add_argument("--channels", type=int, default=3)
    p.add_argument("--length", type=int, default=32)
    p.add_argument("--patch", type=int, default=4)
    p.add_argument("--dim", type=int, default=4)
    p.add_argument("--mask-ratio", type=float, default=0.5)
    p.add_argument("--batch-size", type=int, default=16)
    p.add_argument("--epochs", type=int, default=1)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args([])

    setup_logging()
    seed_everything(args.seed)
    data = make_signals(args.n, args.channels, args.length, seed=1)
    val = make_signals(16, args.channels, args.length, seed=2)
    model = MaskedSignalAE(args.channels, args.dim, args.patch, args.length)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.05)
    saver = CheckpointSaver(keep=1, mode="min")
    for epoch in range(args.epochs):
        meter = AverageMeter("recon")
        model.train()
        with Timer() as t:
            for i in range(0, args.n, args.batch_size):
                loss, _ = model(data[i:i + args.batch_size], args.mask_ratio)
                opt.zero_grad()
                loss.backward()
                opt.step()
                meter.update(loss.item())
        model.eval()
        with torch.no_grad():
            val_loss, _ = model(val, args.mask_ratio)
        logger.info("epoch %d %s val %.4f (%.1fs)", epoch, meter, val_loss.item(), t.elapsed)
        saver.save(model.state_dict(), val_loss.item(), epoch)
    saver.cleanup()


if __name__ == "__main__":
    main()
