"""Streaming sensor forecasting with a stateful LSTM encoder and a context vector.

Long multichannel series are cut into consecutive windows; the LSTM state and the last
output (a "context" fed to the forecasting head of the next window) are carried across
windows and truncated between them.
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

logger = logging.getLogger("stream")

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


def make_series(n_series, length, channels, seed):
    g = torch.Generator().manual_seed(seed)
    t = torch.arange(length).float()
    freqs = torch.rand(n_series, channels, 1, generator=g) * 0.3 + 0.05
    phase = torch.rand(n_series, channels, 1, generator=g) * 6.28
    x = torch.sin(freqs * t + phase) + 0.05 * torch.randn(n_series, channels, length, generator=g)
    return x.permute(2, 0, 1).contiguous()  # (time, batch, channels)


class StatefulForecaster(nn.Module):
    def __init__(self, channels, hidden, horizon):
        super().__init__()
        self.lstm = nn.LSTM(channels, hidden, num_layers=1)
        self.head = nn.Linear(2 * hidden, channels * horizon)
        self.horizon, self.channels, self.hidden = horizon, channels, hidden
        self.state = None
        self.context = None

    def reset_state(self, batch):
        self.state = (torch.zeros(1, batch, self.hidden), torch.zeros(1, batch, self.hidden))
        self.context = torch.zeros(batch, self.hidden)

    def truncate(self):
        """Cut the graph between windows (truncated BPTT)."""
        self.state = tuple(s.detach() for s in self.state)
        self.context.detach_()

    def forward(self, window):
        out, self.state = self.lstm(window, self.state)
        feats = torch.cat([out[-1], self.context], dim=-1)
        self.context = out[-1].clone()
        pred = self.head(feats)
        return pred.view(-1, self.horizon, self.channels)


def windows(series, size, horizon):
    for start in range(0, series.shape[0] - size - horizon + 1, size):
        x = series[start:start + size]
        y = series[start + size:start + size + horizon].transpose(0, 1)
        yield x, y


def run_epoch(model, series, optimizer, args, train=True):
    model.train(train)
    model.reset_state(series.shape[1])
    meter = AverageMeter("mse")
    for x, y in windows(series, args.window, args.horizon):
        with torch.set_grad_enabled(train):
            pred = model(x)
            loss = F.mse_loss(pred, y)
        if train:
            optimizer.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), args.clip)
            optimizer.step()
            model.truncate()
        meter.update(loss.item(), y.shape[0])
    return meter


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--series", type=int, default=4)
    p.add_argument("--length", type=int, default=120)
    p.add_argument("--channels", type=int, default=3)
    p.add_argument("--hidden", type=int, default=16)
    p.add_argument("--window", type=int, default=20)
    p.add_argument("--horizon", type=int, default=5)
    p.add_argument("--epochs", type=int, default=2)
    p.add_argument("--lr", type=float, default=5e-3)
    p.add_argument("--clip", type=float, default=1.0)
    p.add_argument("--seed", type=int, default=11)
    args = p.parse_args([])

    setup_logging()
    seed_everything(args.seed)
    train_series = make_series(args.series, args.length, args.channels, seed=1)
    val_series = make_series(2, args.length, args.channels, seed=2)
    model = StatefulForecaster(args.channels, args.hidden, args.horizon)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    saver = CheckpointSaver(keep=1, mode="min")
    for epoch in range(args.epochs):
        with Timer() as t:
            train_meter = run_epoch(model, train_series, optimizer, args, train=True)
        val_meter = run_epoch(model, val_series, optimizer, args, train=False)
        logger.info("epoch %d train %s val %s rmse %.3f (%.1fs)", epoch, train_meter, val_meter,
                    math.sqrt(val_meter.avg), t.elapsed)
        saver.save(model.state_dict(), val_meter.avg, epoch)
    saver.cleanup()


if __name__ == "__main__":
    main()
