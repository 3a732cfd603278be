"""Physics-informed neural network for the 1-D Poisson problem -u''(x) = pi^2 sin(pi x), u(0)=u(1)=0.

The PDE residual is computed with torch.autograd.grad (create_graph=True); boundary
conditions are enforced with a penalty term. The exact solution is sin(pi x).
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

logger = logging.getLogger("pinn")

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


class PINN(nn.Module):
    """Fully connected tanh network; an optional activation can be applied after the hidden layers."""

    def __init__(self, layers, hidden_act=None):
        super().__init__()
        self.linears = nn.ModuleList(nn.Linear(a, b) for a, b in zip(layers[:-1], layers[1:]))
        self.hidden_act = hidden_act
        for lin in self.linears:
            nn.init.xavier_normal_(lin.weight)
            nn.init.zeros_(lin.bias)

    def forward(self, x):
        h = x
        for lin in self.linears[:-1]:
            h = torch.tanh(lin(h))
            if self.hidden_act is not None:
                h = self.hidden_act(h)
        return self.linears[-1](h)


def source_term(x):
    return (math.pi ** 2) * torch.sin(math.pi * x)


def pde_residual(model, x):
    x = x.clone().requires_grad_(True)
    u = model(x)
    du = torch.autograd.grad(u, x, torch.ones_like(u), create_graph=True)[0]
    d2u = torch.autograd.grad(du, x, torch.ones_like(du), create_graph=True)[0]
    return -d2u - source_term(x)


def boundary_loss(model):
    xb = torch.tensor([[0.0], [1.0]])
    return (model(xb) ** 2).mean()


def l2_error(model, n=101):
    x = torch.linspace(0, 1, n)[:, None]
    with torch.no_grad():
        err = model(x) - torch.sin(math.pi * x)
    return err.pow(2).mean().sqrt().item()


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--layers", type=str, default="1,20,20,1")
    p.add_argument("--collocation", type=int, default=64)
    p.add_argument("--adam-iters", type=int, default=30)
    p.add_argument("--lbfgs-iters", type=int, default=5)
    p.add_argument("--lr", type=float, default=1e-2)
    p.add_argument("--bc-weight", type=float, default=10.0)
    p.add_argument("--positive-features", action="store_true", default=True,
                   help="clip hidden features at zero (in place, to save memory)")
    p.add_argument("--seed", type=int, default=1234)
    args = p.parse_args([])

    setup_logging()
    seed_everything(args.seed)
    layers = [int(v) for v in args.layers.split(",")]
    hidden_act = nn.ReLU() if args.positive_features else None
    model = PINN(layers, hidden_act)
    x_col = torch.rand(args.collocation, 1)
    saver = CheckpointSaver(keep=1, mode="min")

    def total_loss():
        res = pde_residual(model, x_col)
        return res.pow(2).mean() + args.bc_weight * boundary_loss(model)

    adam = torch.optim.Adam(model.parameters(), lr=args.lr)
    meter = AverageMeter("loss")
    with Timer() as t:
        for it in range(args.adam_iters):
            adam.zero_grad()
            loss = total_loss()
            loss.backward()
            adam.step()
            meter.update(loss.item())
            if it % 10 == 0:
                logger.info("adam iter %d %s L2 %.4f", it, meter, l2_error(model))

        lbfgs = torch.optim.LBFGS(model.parameters(), lr=0.5, max_iter=args.lbfgs_iters,
                                  line_search_fn="strong_wolfe")

        def closure():
            lbfgs.zero_grad()
            loss = total_loss()
            loss.backward()
            return loss

        lbfgs.step(closure)
    err = l2_error(model)
    logger.info("final L2 error %.4f (%.1fs)", err, t.elapsed)
    saver.save(model.state_dict(), err, 0)
    saver.cleanup()


if __name__ == "__main__":
    main()
