"""LoRA fine-tuning of a tiny pre-norm transformer classifier on synthetic sequences.

The base weights are frozen; low-rank adapters on the attention projections and the
MLP are trained. Adapter dropout is applied to the adapter input only.
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

logger = logging.getLogger("lora")

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


class LoRALinear(nn.Module):
    def __init__(self, base: nn.Linear, r=4, alpha=8, dropout=0.1):
        super().__init__()
        self.base = base
        self.lora_A = nn.Parameter(torch.randn(r, base.in_features) / math.sqrt(base.in_features))
        self.lora_B = nn.Parameter(torch.zeros(base.out_features, r))
        self.scaling = alpha / r
        self.dropout = dropout
        base.weight.requires_grad_(False)
        if base.bias is not None:
            base.bias.requires_grad_(False)

    def forward(self, x):
        result = self.base(x)
        # dropout only on the adapter path; in place to save activation memory
        x_d = F.dropout(x, p=self.dropout, training=self.training, inplace=True)
        return result + (x_d @ self.lora_A.t() @ self.lora_B.t()) * self.scaling


class Block(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.ln1 = nn.LayerNorm(d)
        self.q_proj = nn.Linear(d, d)
        self.k_proj = nn.Linear(d, d)
        self.v_proj = nn.Linear(d, d)
        self.proj = nn.Linear(d, d)
        self.ln2 = nn.LayerNorm(d)
        self.fc1 = nn.Linear(d, 4 * d)
        self.fc2 = nn.Linear(4 * d, d)
        self.heads = heads

    def forward(self, x):
        b, s, d = x.shape
        h = self.ln1(x)
        q = self.q_proj(h).view(b, s, self.heads, -1).transpose(1, 2)
        k = self.k_proj(h).view(b, s, self.heads, -1).transpose(1, 2)
        v = self.v_proj(h).view(b, s, self.heads, -1).transpose(1, 2)
        att = F.scaled_dot_product_attention(q, k, v)
        x = x + self.proj(att.transpose(1, 2).reshape(b, s, d))
        h = self.ln2(x)
        return x + self.fc2(F.gelu(self.fc1(h)))


class TinyEncoder(nn.Module):
    def __init__(self, vocab, d, layers, heads, classes):
        super().__init__()
        self.embed = nn.Embedding(vocab, d)
        self.pos = nn.Parameter(torch.zeros(1, 32, d))
        self.blocks = nn.ModuleList(Block(d, heads) for _ in range(layers))
        self.norm = nn.LayerNorm(d)
        self.head = nn.Linear(d, classes)

    def forward(self, idx):
        x = self.embed(idx) + self.pos[:, : idx.shape[1]]
        for blk in self.blocks:
            x = blk(x)
        return self.head(self.norm(x).mean(1))


def add_lora(model, targets, r, alpha, dropout):
    for blk in model.blocks:
        for name in targets:
            setattr(blk, name, LoRALinear(getattr(blk, name), r, alpha, dropout))
    for n, p in model.named_parameters():
        if "lora_" not in n and not n.startswith("head."):
            p.requires_grad_(False)
    return model


def synthetic_task(n, seq, vocab, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randint(0, vocab, (n, seq), generator=g)
    y = (x[:, 0] > x[:, -1]).long()
    return x, y


def count_trainable(model):
    trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
    total = sum(p.numel() for p in model.parameters())
    return trainable, total


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--vocab", type=int, default=32)
    p.add_argument("--seq", type=int, default=12)
    p.add_argument("--d-model", type=int, default=32)
    p.add_argument("--layers", type=int, default=2)
    p.add_argument("--heads", type=int, default=4)
    p.add_argument("--lora-r", type=int, default=4)
    p.add_argument("--lora-alpha", type=int, default=8)
    p.add_argument("--lora-dropout", type=float, default=0.1)
    p.add_argument("--targets", default="q_proj,v_proj")
    p.add_argument("--epochs", type=int, default=1)
    p.add_argument("--batch-size", type=int, default=16)
    p.add_argument("--lr", type=float, default=5e-3)
    p.add_argument("--seed", type=int, default=42)
    args = p.parse_args([])

    setup_logging()
    seed_everything(args.seed)
    model = TinyEncoder(args.vocab, args.d_model, args.layers, args.heads, 2)
    model = add_lora(model, args.targets.split(","), args.lora_r, args.lora_alpha, args.lora_dropout)
    trainable, total = count_trainable(model)
    logger.info("trainable params: %d || all params: %d || %.2f%%", trainable, total, 100 * trainable / total)
    x, y = synthetic_task(128, args.seq, args.vocab, seed=1)
    vx, vy = synthetic_task(64, args.seq, args.vocab, seed=2)
    optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=args.lr)
    saver = CheckpointSaver(keep=1)
    for epoch in range(args.epochs):
        meter = AverageMeter("loss")
        model.train()
        with Timer() as t:
            for i in range(0, len(x), args.batch_size):
                logits = model(x[i:i + args.batch_size])
                loss = F.cross_entropy(logits, y[i:i + args.batch_size])
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                meter.update(loss.item())
        model.eval()
        with torch.no_grad():
            acc = (model(vx).argmax(-1) == vy).float().mean().item()
        logger.info("epoch %d %s acc %.3f (%.1fs)", epoch, meter, acc, t.elapsed)
        adapters = {k: v for k, v in model.state_dict().items() if "lora_" in k}
        saver.save(adapters, acc, epoch)
    saver.cleanup()


if __name__ == "__main__":
    main()
