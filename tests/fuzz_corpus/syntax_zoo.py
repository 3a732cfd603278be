from __future__ import annotations

import torch
from torch import nn
from typing import Callable


def decorator(fn: Callable) -> Callable:
    return fn


@decorator
@torch.no_grad()
def ema(target: nn.Module, source: nn.Module, decay: float = 0.99) -> None:
    for t, s in zip(target.parameters(), source.parameters()):
        t.mul_(decay).add_(s, alpha=1 - decay)


async def fetch(loader):
    async for batch in loader:
        yield batch


def step(x: torch.Tensor, *, scale=2.0, **kw) -> torch.Tensor:
    if (n := x.numel()) > 10:
        y = x.sigmoid()
        y[0] = 0  # the sigmoid output is saved
    elif n == 0:
        y = x
    else:
        y = x.exp()
    match kw:
        case {"mode": "relu"}:
            y = torch.relu(y)
        case [first, *rest]:
            y = y * len(rest)
        case _:
            pass
    try:
        y += scale
    except (RuntimeError, ValueError) as exc:
        raise ValueError(f"{exc!r:>10} {'nested'} {y.shape=}") from exc
    finally:
        del kw
    total = 0
    def inner():
        nonlocal total
        total += 1
        return lambda z=y: z ** 2
    with torch.enable_grad(), torch.autograd.set_detect_anomaly(False):
        out = inner()(y)
    return out if out is not None else y


class Net(nn.Module):
    scale: float = 1.0

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 3)
        self.fc.weight.data *= 0.5
        self.fc.bias.fill_(0)  # GG101 on a parameter

    def forward(self, x):
        x = self.fc(x)
        x = torch.tanh(x)
        x += 1
        return x[::2, ...]


x = torch.randn(4, 3, requires_grad=True)
net = Net()
loss = net(x).sum() + step(x).sum()
loss.backward(retain_graph=True)
x.grad[:] = 0 ; print(*[p.shape for p in net.parameters()], sep="\n")
