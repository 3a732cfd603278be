"""Logit + feature distillation of a small student MLP from a larger frozen teacher.

Synthetic 10-class data; the teacher is first trained briefly, then frozen and run
under inference mode to produce soft targets and hint features for the student.
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
from torch.utils.data import DataLoader, TensorDataset

logger = logging.getLogger("distill")

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


def make_data(n, dim, classes, seed):
    g = torch.Generator().manual_seed(seed)
    centers = torch.randn(classes, dim, generator=g) * 2
    y = torch.randint(0, classes, (n,), generator=g)
    x = centers[y] + torch.randn(n, dim, generator=g)
    return TensorDataset(x, y)


class MLP(nn.Module):
    def __init__(self, dim, hidden, classes, depth):
        super().__init__()
        layers, d = [], dim
        for _ in range(depth):
            layers += [nn.Linear(d, hidden), nn.GELU()]
            d = hidden
        self.features = nn.Sequential(*layers)
        self.head = nn.Linear(hidden, classes)

    def forward(self, x, return_features=False):
        f = self.features(x)
        out = self.head(f)
        return (out, f) if return_features else out


class DistillationLoss(nn.Module):
    def __init__(self, teacher, student_dim, teacher_dim, temperature=4.0, alpha=0.7, beta=0.1):
        super().__init__()
        self.teacher = teacher
        self.proj = nn.Linear(student_dim, teacher_dim)
        self.t, self.alpha, self.beta = temperature, alpha, beta

    def forward(self, x, student_logits, student_feats, labels):
        with torch.no_grad():
            teacher_logits, teacher_feats = self.teacher(x, return_features=True)
        soft = F.kl_div(F.log_softmax(student_logits / self.t, dim=-1),
                        F.softmax(teacher_logits / self.t, dim=-1), reduction="batchmean") * self.t ** 2
        hard = F.cross_entropy(student_logits, labels)
        # cosine hint loss between projected student features and teacher features
        hint = 1 - (F.normalize(self.proj(student_feats), dim=-1) * teacher_feats).sum(-1).mean()
        return self.alpha * soft + (1 - self.alpha) * hard + self.beta * hint


def accuracy(logits, labels):
    return (logits.argmax(-1) == labels).float().mean().item()


def train_teacher(teacher, loader, epochs, lr):
    opt = torch.optim.Adam(teacher.parameters(), lr=lr)
    for _ in range(epochs):
        for x, y in loader:
            opt.zero_grad()
            F.cross_entropy(teacher(x), y).backward()
            opt.step()
    teacher.eval()
    for p in teacher.parameters():
        p.requires_grad_(False)
    return teacher


@torch.no_grad()
def evaluate(model, loader):
    model.eval()
    meter = AverageMeter("acc")
    for x, y in loader:
        meter.update(accuracy(model(x), y), len(y))
    model.train()
    return meter.avg


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--dim", type=int, default=16)
    p.add_argument("--classes", type=int, default=10)
    p.add_argument("--teacher-hidden", type=int, default=64)
    p.add_argument("--student-hidden", type=int, default=16)
    p.add_argument("--teacher-epochs", type=int, default=1)
    p.add_argument("--epochs", type=int, default=2)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--lr", type=float, default=2e-3)
    p.add_argument("--temperature", type=float, default=4.0)
    p.add_argument("--seed", type=int, default=7)
    args = p.parse_args([])

    setup_logging()
    seed_everything(args.seed)
    train_set = make_data(256, args.dim, args.classes, seed=1)
    val_set = make_data(64, args.dim, args.classes, seed=2)
    train_loader = DataLoader(train_set, batch_size=args.batch_size, shuffle=True)
    val_loader = DataLoader(val_set, batch_size=64)

    teacher = train_teacher(MLP(args.dim, args.teacher_hidden, args.classes, depth=3), train_loader,
                            args.teacher_epochs, args.lr)
    student = MLP(args.dim, args.student_hidden, args.classes, depth=2)
    criterion = DistillationLoss(teacher, args.student_hidden, args.teacher_hidden, args.temperature)
    params = list(student.parameters()) + list(criterion.proj.parameters())
    optimizer = torch.optim.AdamW(params, lr=args.lr, weight_decay=1e-4)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=args.epochs * len(train_loader))
    saver = CheckpointSaver(keep=1)

    for epoch in range(args.epochs):
        loss_meter = AverageMeter("loss")
        with Timer() as t:
            for x, y in train_loader:
                logits, feats = student(x, return_features=True)
                loss = criterion(x, logits, feats, y)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                scheduler.step()
                loss_meter.update(loss.item(), len(y))
        acc = evaluate(student, val_loader)
        logger.info("epoch %d %s val acc %.3f teacher acc %.3f (%.1fs)", epoch, loss_meter, acc,
                    evaluate(teacher, val_loader), t.elapsed)
        saver.save({"student": student.state_dict(), "proj": criterion.proj.state_dict()}, acc, epoch)
    saver.cleanup()


if __name__ == "__main__":
    main()
