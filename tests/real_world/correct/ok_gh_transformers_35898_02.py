"""Parameter-efficient fine-tuning of a small BERT-like encoder with gradient checkpointing.

Mirrors the usual recipe: freeze the backbone, add LoRA adapters, call
`enable_input_require_grads()` so re-entrant checkpointing still sees a grad-requiring
input, and train a classification head.
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
from torch.utils.checkpoint import checkpoint

logger = logging.getLogger("peft-ckpt")

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


class Embeddings(nn.Module):
    def __init__(self, vocab, d, max_pos):
        super().__init__()
        self.word_embeddings = nn.Embedding(vocab, d)
        self.position_embeddings = nn.Embedding(max_pos, d)
        self.LayerNorm = nn.LayerNorm(d)

    def forward(self, input_ids):
        pos = torch.arange(input_ids.shape[1]).unsqueeze(0)
        embeddings = self.word_embeddings(input_ids)
        embeddings += self.position_embeddings(pos)
        return self.LayerNorm(embeddings)


class LoRA(nn.Module):
    def __init__(self, base, r=4, alpha=8):
        super().__init__()
        self.base = base
        self.A = nn.Parameter(torch.randn(r, base.in_features) * 0.01)
        self.B = nn.Parameter(torch.zeros(base.out_features, r))
        self.scale = alpha / r

    def forward(self, x):
        return self.base(x) + (x @ self.A.t() @ self.B.t()) * self.scale


class Layer(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.attn = nn.MultiheadAttention(d, heads, batch_first=True)
        self.ln1 = nn.LayerNorm(d)
        self.intermediate = nn.Linear(d, 2 * d)
        self.output = nn.Linear(2 * d, d)
        self.ln2 = nn.LayerNorm(d)

    def forward(self, x):
        x = self.ln1(x + self.attn(x, x, x, need_weights=False)[0])
        return self.ln2(x + self.output(F.gelu(self.intermediate(x))))


class Encoder(nn.Module):
    def __init__(self, vocab=64, d=32, layers=2, heads=4, max_pos=32, num_labels=3):
        super().__init__()
        self.embeddings = Embeddings(vocab, d, max_pos)
        self.layers = nn.ModuleList(Layer(d, heads) for _ in range(layers))
        self.classifier = nn.Linear(d, num_labels)
        self.gradient_checkpointing = False

    def get_input_embeddings(self):
        return self.embeddings.word_embeddings

    def enable_input_require_grads(self):
        def make_inputs_require_grads(module, input, output):
            output.requires_grad_(True)
        self._require_grads_hook = self.get_input_embeddings().register_forward_hook(make_inputs_require_grads)

    def gradient_checkpointing_enable(self):
        self.gradient_checkpointing = True

    def forward(self, input_ids, labels=None):
        h = self.embeddings(input_ids)
        for layer in self.layers:
            if self.gradient_checkpointing and self.training:
                h = checkpoint(layer, h, use_reentrant=True)
            else:
                h = layer(h)
        logits = self.classifier(h[:, 0])
        loss = F.cross_entropy(logits, labels) if labels is not None else None
        return loss, logits


def prepare_model_for_lora(model, r, alpha):
    for p in model.parameters():
        p.requires_grad_(False)
    for layer in model.layers:
        layer.intermediate = LoRA(layer.intermediate, r, alpha)
        layer.output = LoRA(layer.output, r, alpha)
    for p in model.classifier.parameters():
        p.requires_grad_(True)
    # the tokenizer got new tokens: train the word embeddings as well
    model.embeddings.word_embeddings.weight.requires_grad_(True)
    model.gradient_checkpointing_enable()
    model.enable_input_require_grads()
    return model


def make_split(n, seq, vocab, labels, seed):
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(1, vocab, (n, seq), generator=g)
    y = ids[:, 1:4].sum(1) % labels
    return ids, y


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seq-len", type=int, default=10)
    parser.add_argument("--train-size", type=int, default=96)
    parser.add_argument("--eval-size", type=int, default=32)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--lora-r", type=int, default=4)
    parser.add_argument("--lora-alpha", type=int, default=16)
    parser.add_argument("--warmup-ratio", type=float, default=0.1)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args([])

    setup_logging()
    seed_everything(args.seed)
    model = prepare_model_for_lora(Encoder(), args.lora_r, args.lora_alpha)
    train_ids, train_y = make_split(args.train_size, args.seq_len, 64, 3, seed=1)
    eval_ids, eval_y = make_split(args.eval_size, args.seq_len, 64, 3, seed=2)
    params = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(params, lr=args.lr)
    total_steps = args.epochs * math.ceil(args.train_size / args.batch_size)
    warmup = max(1, int(args.warmup_ratio * total_steps))
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: min(1.0, (s + 1) / warmup))
    saver = CheckpointSaver(keep=1)
    for epoch in range(args.epochs):
        model.train()
        meter = AverageMeter("loss")
        with Timer() as t:
            for i in range(0, args.train_size, args.batch_size):
                loss, _ = model(train_ids[i:i + args.batch_size], train_y[i:i + args.batch_size])
                loss.backward()
                optimizer.step()
                scheduler.step()
                optimizer.zero_grad()
                meter.update(loss.item())
        model.eval()
        with torch.no_grad():
            _, logits = model(eval_ids)
            acc = (logits.argmax(-1) == eval_y).float().mean().item()
        logger.info("epoch %d %s eval acc %.3f (%.1fs)", epoch, meter, acc, t.elapsed)
        saver.save({k: v for k, v in model.state_dict().items() if ".A" in k or ".B" in k}, acc, epoch)
    saver.cleanup()


if __name__ == "__main__":
    main()
