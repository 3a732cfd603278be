"""Train a token-confidence head for an iterative feature matcher (LightGlue-style early exit).

Descriptors of two synthetic keypoint sets are refined by a few attention layers; after
each layer a confidence head predicts whether a token's match has already converged.
"""
import argparse
import logging
import os
import random
import shutil
import tempfile
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

logger = logging.getLogger("confidence")

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


class TokenConfidence(nn.Module):
    def __init__(self, dim, probabilities=True, eps=1e-6):
        super().__init__()
        self.token = nn.Linear(dim, 1)
        if probabilities:
            self.token = nn.Sequential(self.token, nn.Sigmoid())
        self.eps = eps

    def forward(self, desc):
        conf = self.token(desc.detach()).squeeze(-1)
        # keep log() finite in the loss
        return conf.clamp(self.eps, 1 - self.eps)

    def loss(self, conf, correct):
        correct = correct.float()
        return -(correct * conf.log() + (1 - correct) * (1 - conf).log()).mean()


class MatcherLayer(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.self_attn = nn.MultiheadAttention(dim, heads, batch_first=True)
        self.cross_attn = nn.MultiheadAttention(dim, heads, batch_first=True)
        self.ffn = nn.Sequential(nn.Linear(dim, 2 * dim), nn.GELU(), nn.Linear(2 * dim, dim))
        self.norm = nn.LayerNorm(dim)

    def forward(self, d0, d1):
        d0 = d0 + self.self_attn(d0, d0, d0, need_weights=False)[0]
        d1 = d1 + self.self_attn(d1, d1, d1, need_weights=False)[0]
        d0, d1 = (d0 + self.cross_attn(d0, d1, d1, need_weights=False)[0],
                  d1 + self.cross_attn(d1, d0, d0, need_weights=False)[0])
        return self.norm(d0 + self.ffn(d0)), self.norm(d1 + self.ffn(d1))


class Matcher(nn.Module):
    def __init__(self, dim=16, heads=2, layers=3):
        super().__init__()
        self.layers = nn.ModuleList(MatcherLayer(dim, heads) for _ in range(layers))
        self.confidence = nn.ModuleList(TokenConfidence(dim) for _ in range(layers - 1))

    def scores(self, d0, d1):
        return torch.einsum("bnd,bmd->bnm", d0, d1) / d0.shape[-1] ** 0.5

    def forward(self, d0, d1, gt):
        losses, confs, assignments = [], [], []
        for i, layer in enumerate(self.layers):
            d0, d1 = layer(d0, d1)
            sim = self.scores(d0, d1)
            losses.append(F.cross_entropy(sim.transpose(1, 2), gt))
            assignments.append(sim.argmax(-1))
            if i < len(self.confidence):
                confs.append(self.confidence[i](d0))
        final = assignments[-1]
        conf_loss = sum(head.loss(c, a == final) for head, c, a in zip(self.confidence, confs, assignments))
        return sum(losses) / len(losses), conf_loss


def make_pair(batch, n, dim, gen):
    d0 = torch.randn(batch, n, dim, generator=gen)
    perm = torch.stack([torch.randperm(n, generator=gen) for _ in range(batch)])
    d1 = torch.gather(d0, 1, perm[..., None].expand(-1, -1, dim)) + 0.3 * torch.randn(batch, n, dim, generator=gen)
    gt = torch.argsort(perm, dim=1)
    return d0, d1, gt


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--dim", type=int, default=16)
    p.add_argument("--keypoints", type=int, default=12)
    p.add_argument("--layers", type=int, default=3)
    p.add_argument("--batch-size", type=int, default=4)
    p.add_argument("--steps", type=int, default=4)
    p.add_argument("--conf-weight", type=float, default=0.1)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--seed", type=int, default=5)
    args = p.parse_args([])

    setup_logging()
    seed_everything(args.seed)
    model = Matcher(args.dim, 2, args.layers)
    opt = torch.optim.Adam(model.parameters(), lr=args.lr)
    gen = torch.Generator().manual_seed(args.seed)
    saver = CheckpointSaver(keep=1, mode="min")
    match_meter, conf_meter = AverageMeter("match"), AverageMeter("conf")
    for step in range(args.steps):
        with Timer() as t:
            d0, d1, gt = make_pair(args.batch_size, args.keypoints, args.dim, gen)
            match_loss, conf_loss = model(d0, d1, gt)
            loss = match_loss + args.conf_weight * conf_loss
            opt.zero_grad()
            loss.backward()
            opt.step()
        match_meter.update(match_loss.item())
        conf_meter.update(conf_loss.item())
        logger.info("step %d %s %s (%.2fs)", step, match_meter, conf_meter, t.elapsed)
    saver.save(model.state_dict(), match_meter.avg, args.steps)
    saver.cleanup()


if __name__ == "__main__":
    main()
