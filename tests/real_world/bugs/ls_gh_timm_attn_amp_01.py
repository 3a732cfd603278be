"""Train a tiny Vision Transformer on synthetic 16x16 images with mixed precision (bf16 autocast).

Patch embedding, pre-norm transformer blocks, class token, cosine LR schedule with warmup,
gradient clipping and a GradScaler (no-op for bf16, kept for fp16 runs on GPU).
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

logger = logging.getLogger("vit-amp")

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


class Attention(nn.Module):
    def __init__(self, dim, num_heads=2):
        super().__init__()
        self.num_heads = num_heads
        self.head_dim = dim // num_heads
        self.scale = self.head_dim ** -0.5
        self.qkv = nn.Linear(dim, dim * 3)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        B, N, C = x.shape
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        q = q.reshape(B, N, self.num_heads, self.head_dim).transpose(1, 2)
        k = k.reshape(B, N, self.num_heads, self.head_dim).transpose(1, 2)
        v = v.reshape(B, N, self.num_heads, self.head_dim).transpose(1, 2)
        q.mul_(self.scale)
        attn = (q @ k.transpose(-2, -1)).softmax(dim=-1)
        x = (attn @ v).transpose(1, 2).reshape(B, N, C)
        return self.proj(x)


class Block(nn.Module):
    def __init__(self, dim, heads, mlp_ratio=2.0):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.attn = Attention(dim, heads)
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, int(dim * mlp_ratio)), nn.GELU(), nn.Linear(int(dim * mlp_ratio), dim))

    def forward(self, x):
        x = x + self.attn(self.norm1(x))
        return x + self.mlp(self.norm2(x))


class TinyViT(nn.Module):
    def __init__(self, img=16, patch=4, dim=32, depth=2, heads=2, classes=4):
        super().__init__()
        self.patch_embed = nn.Conv2d(1, dim, patch, stride=patch)
        n = (img // patch) ** 2
        self.cls_token = nn.Parameter(torch.zeros(1, 1, dim))
        self.pos_embed = nn.Parameter(torch.randn(1, n + 1, dim) * 0.02)
        self.blocks = nn.Sequential(*[Block(dim, heads) for _ in range(depth)])
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, classes)

    def forward(self, x):
        x = self.patch_embed(x).flatten(2).transpose(1, 2)
        x = torch.cat([self.cls_token.expand(x.shape[0], -1, -1), x], dim=1) + self.pos_embed
        x = self.norm(self.blocks(x))
        return self.head(x[:, 0])


def synthetic_images(n, seed, classes=4):
    g = torch.Generator().manual_seed(seed)
    y = torch.randint(0, classes, (n,), generator=g)
    x = torch.randn(n, 1, 16, 16, generator=g) * 0.3
    for c in range(classes):
        x[y == c, :, 4 * c:4 * c + 4, :] += 1.0  # a bright horizontal band per class
    return x, y


def cosine_with_warmup(step, total, warmup):
    if step < warmup:
        return (step + 1) / warmup
    return 0.5 * (1 + math.cos(math.pi * (step - warmup) / max(1, total - warmup)))


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--epochs", type=int, default=1)
    p.add_argument("--batch-size", type=int, default=16)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--warmup-steps", type=int, default=2)
    p.add_argument("--clip-grad", type=float, default=1.0)
    p.add_argument("--amp-dtype", default="bfloat16", choices=["bfloat16", "float16"])
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args([])

    setup_logging()
    seed_everything(args.seed)
    x, y = synthetic_images(64, seed=1)
    vx, vy = synthetic_images(32, seed=2)
    model = TinyViT()
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.05)
    total = args.epochs * math.ceil(len(x) / args.batch_size)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: cosine_with_warmup(s, total, args.warmup_steps))
    amp_dtype = getattr(torch, args.amp_dtype)
    scaler = torch.amp.GradScaler("cpu", enabled=amp_dtype == torch.float16)
    saver = CheckpointSaver(keep=1)
    for epoch in range(args.epochs):
        model.train()
        meter = AverageMeter("loss")
        with Timer() as t:
            for i in range(0, len(x), args.batch_size):
                with torch.autocast("cpu", dtype=amp_dtype):
                    loss = F.cross_entropy(model(x[i:i + args.batch_size]), y[i:i + args.batch_size])
                opt.zero_grad(set_to_none=True)
                scaler.scale(loss).backward()
                scaler.unscale_(opt)
                nn.utils.clip_grad_norm_(model.parameters(), args.clip_grad)
                scaler.step(opt)
                scaler.update()
                sched.step()
                meter.update(loss.item())
        model.eval()
        with torch.no_grad(), torch.autocast("cpu", dtype=amp_dtype):
            acc = (model(vx).argmax(-1) == vy).float().mean().item()
        logger.info("epoch %d %s acc %.3f lr %.2e (%.1fs)", epoch, meter, acc, sched.get_last_lr()[0], t.elapsed)
        saver.save({"model": model.state_dict(), "scaler": scaler.state_dict()}, acc, epoch)
    saver.cleanup()


if __name__ == "__main__":
    main()
