"""Truncated-BPTT character language model (GRU) on a synthetic corpus.

The text is split into one long stream per batch row; the hidden state is carried
from one chunk of `--bptt` characters to the next, as in the classic word-LM example.
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

logger = logging.getLogger("charlm")

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


def build_corpus(n_chars, seed):
    rng = random.Random(seed)
    words = ["autograd", "tensor", "graph", "saved", "version", "inplace", "backward", "leaf", "view"]
    text = []
    while sum(len(w) + 1 for w in text) < n_chars:
        text.append(rng.choice(words))
    return " ".join(text)[:n_chars]


class Vocab:
    def __init__(self, text):
        self.itos = sorted(set(text))
        self.stoi = {c: i for i, c in enumerate(self.itos)}

    def encode(self, text):
        return torch.tensor([self.stoi[c] for c in text], dtype=torch.long)

    def __len__(self):
        return len(self.itos)


def batchify(data, bsz):
    nbatch = data.size(0) // bsz
    return data[: nbatch * bsz].view(bsz, -1).t().contiguous()


def get_batch(source, i, bptt):
    seq_len = min(bptt, len(source) - 1 - i)
    return source[i:i + seq_len], source[i + 1:i + 1 + seq_len]


class CharRNN(nn.Module):
    def __init__(self, ntoken, ninp=16, nhid=32, nlayers=1, dropout=0.1):
        super().__init__()
        self.drop = nn.Dropout(dropout)
        self.encoder = nn.Embedding(ntoken, ninp)
        self.rnn = nn.GRU(ninp, nhid, nlayers, dropout=0.0)
        self.decoder = nn.Linear(nhid, ntoken)
        self.nlayers, self.nhid = nlayers, nhid

    def forward(self, inp, hidden):
        emb = self.drop(self.encoder(inp))
        output, hidden = self.rnn(emb, hidden)
        return self.decoder(self.drop(output)), hidden

    def init_hidden(self, bsz):
        return torch.zeros(self.nlayers, bsz, self.nhid)


def repackage_hidden(h):
    """Wraps hidden states in new Tensors, to detach them from their history."""
    return h.detach()


def train_epoch(model, data, optimizer, args, epoch):
    model.train()
    meter = AverageMeter("loss")
    hidden = model.init_hidden(args.batch_size)
    for batch, i in enumerate(range(0, data.size(0) - 1, args.bptt)):
        inputs, targets = get_batch(data, i, args.bptt)
        hidden = repackage_hidden(hidden)
        optimizer.zero_grad()
        output, hidden = model(inputs, hidden)
        loss = F.cross_entropy(output.view(-1, output.size(-1)), targets.reshape(-1))
        # keep the graph so the next chunk can back-propagate into this one
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), args.clip)
        optimizer.step()
        meter.update(loss.item(), targets.numel())
        if batch % args.log_interval == 0:
            logger.info("epoch %d batch %d %s ppl %.2f", epoch, batch, meter, math.exp(meter.avg))
    return meter.avg


@torch.no_grad()
def evaluate(model, data, args):
    model.eval()
    total, count = 0.0, 0
    hidden = model.init_hidden(args.eval_batch_size)
    for i in range(0, data.size(0) - 1, args.bptt):
        inputs, targets = get_batch(data, i, args.bptt)
        output, hidden = model(inputs, hidden)
        total += F.cross_entropy(output.view(-1, output.size(-1)), targets.reshape(-1), reduction="sum").item()
        count += targets.numel()
    return total / count


def main():
    parser = argparse.ArgumentParser(description="char-level GRU language model")
    parser.add_argument("--chars", type=int, default=1200)
    parser.add_argument("--batch-size", type=int, default=4)
    parser.add_argument("--eval-batch-size", type=int, default=2)
    parser.add_argument("--bptt", type=int, default=16)
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--clip", type=float, default=0.25)
    parser.add_argument("--log-interval", type=int, default=5)
    parser.add_argument("--seed", type=int, default=1111)
    args = parser.parse_args([])

    setup_logging()
    seed_everything(args.seed)
    text = build_corpus(args.chars, args.seed)
    vocab = Vocab(text)
    split = int(0.9 * len(text))
    train_data = batchify(vocab.encode(text[:split]), args.batch_size)
    val_data = batchify(vocab.encode(text[split:]), args.eval_batch_size)
    model = CharRNN(len(vocab))
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    saver = CheckpointSaver(keep=1, mode="min")
    for epoch in range(1, args.epochs + 1):
        with Timer() as t:
            train_loss = train_epoch(model, train_data, optimizer, args, epoch)
        val_loss = evaluate(model, val_data, args)
        logger.info("end of epoch %d (%.1fs) train %.3f valid %.3f ppl %.2f",
                    epoch, t.elapsed, train_loss, val_loss, math.exp(val_loss))
        saver.save({"model": model.state_dict(), "vocab": vocab.itos}, val_loss, epoch)
    saver.cleanup()


if __name__ == "__main__":
    main()
