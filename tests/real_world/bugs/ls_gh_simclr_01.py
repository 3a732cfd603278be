"""SimCLR-style contrastive pre-training on synthetic 2-view data, then a linear probe.

Two random augmentations (noise + feature dropout + scaling) of each sample are
encoded, projected, and trained with the NT-Xent loss.
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
from torch.utils.data import DataLoader, Dataset

logger = logging.getLogger("simclr")

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


class SyntheticClusters(Dataset):
    def __init__(self, n, dim, classes, seed):
        g = torch.Generator().manual_seed(seed)
        self.centers = torch.randn(classes, dim, generator=g) * 3
        self.labels = torch.randint(0, classes, (n,), generator=g)
        self.x = self.centers[self.labels] + torch.randn(n, dim, generator=g)

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, i):
        return self.x[i], self.labels[i]


class Augment:
    def __init__(self, noise=0.3, drop=0.2):
        self.noise, self.drop = noise, drop

    def __call__(self, x):
        keep = (torch.rand_like(x) > self.drop).float()
        scale = 1 + 0.2 * torch.randn(x.shape[0], 1)
        return (x + self.noise * torch.randn_like(x)) * keep * scale


class Encoder(nn.Module):
    def __init__(self, dim, hidden, out_dim):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(dim, hidden), nn.BatchNorm1d(hidden), nn.ReLU(),
                                      nn.Linear(hidden, hidden), nn.ReLU())
        self.projector = nn.Sequential(nn.Linear(hidden, hidden), nn.ReLU(), nn.Linear(hidden, out_dim))

    def forward(self, x):
        h = self.backbone(x)
        return h, self.projector(h)


def info_nce_loss(z1, z2, temperature):
    z1 /= z1.norm(dim=1, keepdim=True)
    z2 /= z2.norm(dim=1, keepdim=True)
    z = torch.cat([z1, z2], dim=0)
    sim = z @ z.t() / temperature
    n = z1.shape[0]
    sim.fill_diagonal_(float("-inf"))
    targets = torch.cat([torch.arange(n, 2 * n), torch.arange(0, n)])
    return F.cross_entropy(sim, targets)


def linear_probe(encoder, train_loader, val_loader, classes, epochs=2):
    encoder.eval()
    with torch.no_grad():
        feats = [(encoder(x)[0], y) for x, y in train_loader]
        val = [(encoder(x)[0], y) for x, y in val_loader]
    clf = nn.Linear(feats[0][0].shape[1], classes)
    opt = torch.optim.SGD(clf.parameters(), lr=0.1)
    for _ in range(epochs):
        for h, y in feats:
            opt.zero_grad()
            F.cross_entropy(clf(h), y).backward()
            opt.step()
    correct = sum((clf(h).argmax(1) == y).sum().item() for h, y in val)
    total = sum(len(y) for _, y in val)
    encoder.train()
    return correct / total


def main():
    parser = argparse.ArgumentParser(description="SimCLR (toy)")
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--dim", type=int, default=12)
    parser.add_argument("--hidden", type=int, default=32)
    parser.add_argument("--out-dim", type=int, default=16)
    parser.add_argument("--classes", type=int, default=4)
    parser.add_argument("--temperature", type=float, default=0.5)
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--weight-decay", type=float, default=1e-4)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args([])

    setup_logging()
    seed_everything(args.seed)
    train_set = SyntheticClusters(128, args.dim, args.classes, seed=1)
    val_set = SyntheticClusters(64, args.dim, args.classes, seed=2)
    train_loader = DataLoader(train_set, batch_size=args.batch_size, shuffle=True, drop_last=True)
    val_loader = DataLoader(val_set, batch_size=args.batch_size)
    model = Encoder(args.dim, args.hidden, args.out_dim)
    augment = Augment()
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr, weight_decay=args.weight_decay)
    saver = CheckpointSaver(keep=1)

    for epoch in range(args.epochs):
        meter = AverageMeter("nt_xent")
        with Timer() as t:
            for x, _ in train_loader:
                _, z1 = model(augment(x))
                _, z2 = model(augment(x))
                loss = info_nce_loss(z1, z2, args.temperature)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                meter.update(loss.item(), x.shape[0])
        acc = linear_probe(model, train_loader, val_loader, args.classes)
        logger.info("epoch %d %s probe acc %.3f (%.1fs)", epoch, meter, acc, t.elapsed)
        saver.save({"model": model.state_dict(), "optimizer": optimizer.state_dict()}, acc, epoch)
    saver.cleanup()


if __name__ == "__main__":
    main()
