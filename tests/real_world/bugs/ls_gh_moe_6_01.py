"""Tiny top-1 Mixture-of-Experts transformer block trained on a synthetic copy task.

Tokens are routed to experts through a preallocated dispatch buffer of shape
(num_experts, capacity, d_model), as in Switch-Transformer style implementations.
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

logger = logging.getLogger("moe")

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


class Expert(nn.Module):
    def __init__(self, d_model, d_ff):
        super().__init__()
        self.w1 = nn.Linear(d_model, d_ff)
        self.w2 = nn.Linear(d_ff, d_model)

    def forward(self, x):
        return self.w2(F.gelu(self.w1(x)))


class DispatchBuffer:
    """One buffer shared by every MoE layer, to avoid allocating per layer and step."""

    def __init__(self, num_experts, capacity, d_model):
        self.data = torch.zeros(num_experts, capacity, d_model)

    def fill(self, tokens, expert_idx, capacity):
        self.data.zero_()
        positions = torch.zeros_like(expert_idx)
        counts = [0] * self.data.shape[0]
        for t, e in enumerate(expert_idx.tolist()):
            if counts[e] < capacity:
                positions[t] = counts[e]
                self.data[e, counts[e]] = tokens[t]
                counts[e] += 1
            else:
                positions[t] = -1
        return self.data, positions


class MoELayer(nn.Module):
    def __init__(self, d_model, d_ff, num_experts, capacity, buffer):
        super().__init__()
        self.router = nn.Linear(d_model, num_experts)
        self.experts = nn.ModuleList(Expert(d_model, d_ff) for _ in range(num_experts))
        self.capacity = capacity
        self.buffer = buffer

    def forward(self, x):
        b, s, d = x.shape
        tokens = x.reshape(-1, d)
        gates = F.softmax(self.router(tokens), dim=-1)
        gate, expert_idx = gates.max(dim=-1)
        dispatched, positions = self.buffer.fill(tokens, expert_idx, self.capacity)
        expert_out = torch.stack([expert(dispatched[e]) for e, expert in enumerate(self.experts)])
        out = torch.zeros_like(tokens)
        kept = positions >= 0
        out[kept] = expert_out[expert_idx[kept], positions[kept]] * gate[kept, None]
        aux = (gates.mean(0) * F.one_hot(expert_idx, gates.shape[-1]).float().mean(0)).sum() * gates.shape[-1]
        return out.reshape(b, s, d), aux


class MoEBlock(nn.Module):
    def __init__(self, d_model, n_heads, d_ff, num_experts, capacity, buffer):
        super().__init__()
        self.ln1 = nn.LayerNorm(d_model)
        self.attn = nn.MultiheadAttention(d_model, n_heads, batch_first=True)
        self.ln2 = nn.LayerNorm(d_model)
        self.moe = MoELayer(d_model, d_ff, num_experts, capacity, buffer)

    def forward(self, x):
        h = self.ln1(x)
        x = x + self.attn(h, h, h, need_weights=False)[0]
        m, aux = self.moe(self.ln2(x))
        return x + m, aux


class MoEModel(nn.Module):
    def __init__(self, vocab, d_model, n_layers, n_heads, d_ff, num_experts, capacity):
        super().__init__()
        self.embed = nn.Embedding(vocab, d_model)
        buffer = DispatchBuffer(num_experts, capacity, d_model)
        self.blocks = nn.ModuleList(MoEBlock(d_model, n_heads, d_ff, num_experts, capacity, buffer)
                                    for _ in range(n_layers))
        self.head = nn.Linear(d_model, vocab)

    def forward(self, idx):
        x = self.embed(idx)
        aux_total = 0.0
        for blk in self.blocks:
            x, aux = blk(x)
            aux_total = aux_total + aux
        return self.head(x), aux_total


def copy_task_batch(batch, seq, vocab, gen):
    src = torch.randint(1, vocab, (batch, seq), generator=gen)
    return src, src.roll(1, dims=1)


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--vocab", type=int, default=16)
    p.add_argument("--seq", type=int, default=8)
    p.add_argument("--batch", type=int, default=4)
    p.add_argument("--d-model", type=int, default=16)
    p.add_argument("--layers", type=int, default=2)
    p.add_argument("--heads", type=int, default=2)
    p.add_argument("--experts", type=int, default=4)
    p.add_argument("--capacity-factor", type=float, default=1.5)
    p.add_argument("--steps", type=int, default=3)
    p.add_argument("--aux-weight", type=float, default=0.01)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args([])

    setup_logging()
    seed_everything(args.seed)
    capacity = int(args.capacity_factor * args.batch * args.seq / args.experts)
    model = MoEModel(args.vocab, args.d_model, args.layers, args.heads, 2 * args.d_model, args.experts, capacity)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr)
    gen = torch.Generator().manual_seed(args.seed)
    saver = CheckpointSaver(keep=1, mode="min")
    meter = AverageMeter("loss")
    for step in range(args.steps):
        with Timer() as t:
            src, tgt = copy_task_batch(args.batch, args.seq, args.vocab, gen)
            logits, aux = model(src)
            loss = F.cross_entropy(logits.reshape(-1, args.vocab), tgt.reshape(-1)) + args.aux_weight * aux
            opt.zero_grad()
            loss.backward()
            opt.step()
        meter.update(loss.item())
        logger.info("step %d %s aux %.3f (%.2fs)", step, meter, float(aux), t.elapsed)
    saver.save(model.state_dict(), meter.avg, args.steps)
    saver.cleanup()


if __name__ == "__main__":
    main()
