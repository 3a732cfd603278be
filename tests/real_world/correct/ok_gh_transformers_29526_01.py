"""Train a tiny selective state-space (Mamba-style) language model on a synthetic copy task.

The sequence is processed in chunks; the SSM state is handed from one chunk to the
next through a cache object, as in the reference "slow" (pure PyTorch) forward.
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

logger = logging.getLogger("mamba")

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


class SSMCache:
    def __init__(self, n_layers, batch, d_inner, d_state):
        self.ssm_states = [torch.zeros(batch, d_inner, d_state) for _ in range(n_layers)]

    def update(self, layer_idx, new_state):
        self.ssm_states[layer_idx].copy_(new_state)


class MambaMixer(nn.Module):
    def __init__(self, d_model, d_state, expand, layer_idx):
        super().__init__()
        d_inner = expand * d_model
        self.layer_idx = layer_idx
        self.in_proj = nn.Linear(d_model, 2 * d_inner)
        self.x_proj = nn.Linear(d_inner, 1 + 2 * d_state)
        self.dt_proj = nn.Linear(1, d_inner)
        self.A_log = nn.Parameter(torch.log(torch.arange(1, d_state + 1).float()).repeat(d_inner, 1))
        self.D = nn.Parameter(torch.ones(d_inner))
        self.out_proj = nn.Linear(d_inner, d_model)
        self.d_state = d_state

    def forward(self, x, cache):
        b, L, _ = x.shape
        hidden, gate = self.in_proj(x).chunk(2, dim=-1)
        hidden = F.silu(hidden)
        dt, B, C = torch.split(self.x_proj(hidden), [1, self.d_state, self.d_state], dim=-1)
        dt = F.softplus(self.dt_proj(dt))                       # (b, L, d_inner)
        A = -torch.exp(self.A_log)                              # (d_inner, d_state)
        dA = torch.exp(dt[..., None] * A)                       # (b, L, d_inner, d_state)
        dBu = dt[..., None] * B[:, :, None, :] * hidden[..., None]
        ssm_state = cache.ssm_states[self.layer_idx].clone()
        outputs = []
        for i in range(L):
            ssm_state = dA[:, i] * ssm_state + dBu[:, i]
            outputs.append((ssm_state @ C[:, i, :, None]).squeeze(-1))
        cache.update(self.layer_idx, ssm_state)
        y = torch.stack(outputs, dim=1) + hidden * self.D
        return self.out_proj(y * F.silu(gate))


class MambaLM(nn.Module):
    def __init__(self, vocab, d_model, n_layers, d_state, expand):
        super().__init__()
        self.embed = nn.Embedding(vocab, d_model)
        self.layers = nn.ModuleList(MambaMixer(d_model, d_state, expand, i) for i in range(n_layers))
        self.norms = nn.ModuleList(nn.LayerNorm(d_model) for _ in range(n_layers))
        self.lm_head = nn.Linear(d_model, vocab)
        self.n_layers, self.d_inner, self.d_state = n_layers, expand * d_model, d_state

    def forward(self, ids, chunk):
        cache = SSMCache(self.n_layers, ids.shape[0], self.d_inner, self.d_state)
        logits = []
        for start in range(0, ids.shape[1], chunk):
            x = self.embed(ids[:, start:start + chunk])
            for norm, mixer in zip(self.norms, self.layers):
                x = x + mixer(norm(x), cache)
            logits.append(self.lm_head(x))
        return torch.cat(logits, dim=1)


def copy_batch(batch, length, vocab, gen):
    half = torch.randint(2, vocab, (batch, length // 2), generator=gen)
    seq = torch.cat([half, half], dim=1)
    return seq[:, :-1], seq[:, 1:]


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--vocab", type=int, default=12)
    p.add_argument("--seq-len", type=int, default=12)
    p.add_argument("--chunk", type=int, default=4)
    p.add_argument("--d-model", type=int, default=8)
    p.add_argument("--d-state", type=int, default=4)
    p.add_argument("--expand", type=int, default=2)
    p.add_argument("--layers", type=int, default=2)
    p.add_argument("--batch-size", type=int, default=4)
    p.add_argument("--steps", type=int, default=3)
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args([])

    setup_logging()
    seed_everything(args.seed)
    model = MambaLM(args.vocab, args.d_model, args.layers, args.d_state, args.expand)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01)
    gen = torch.Generator().manual_seed(args.seed)
    saver = CheckpointSaver(keep=1, mode="min")
    meter = AverageMeter("loss")
    for step in range(args.steps):
        with Timer() as t:
            inputs, targets = copy_batch(args.batch_size, args.seq_len, args.vocab, gen)
            logits = model(inputs, args.chunk)
            # only the second half is predictable
            half = targets.shape[1] // 2
            loss = F.cross_entropy(logits[:, half:].reshape(-1, args.vocab), targets[:, half:].reshape(-1))
            opt.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
        meter.update(loss.item())
        logger.info("step %d %s (%.2fs)", step, meter, t.elapsed)
    saver.save(model.state_dict(), meter.avg, args.steps)
    saver.cleanup()


if __name__ == "__main__":
    main()
