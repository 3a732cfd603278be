# torch.compile (backend aot_eager: AOT autograd without a C compiler). train() runs a compiled model for a
# few steps; bug() writes in place into a tensor the compiled graph saves for backward, which fails while
# the graph is compiled, in the forward call (`bug`: bug() alone).
import sys

import torch
from torch import nn


def train():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
    compiled = torch.compile(model, backend="aot_eager")
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(16, 4), torch.randn(16, 1)
    for step in range(3):
        opt.zero_grad()
        loss = nn.functional.mse_loss(compiled(x), y)
        loss.backward()
        opt.step()
        print(step, round(loss.item(), 5))


def scaled_gate(x, w):
    gate = torch.sigmoid(x @ w)
    gate.mul_(2)  # sigmoid saved its output for backward
    return gate.sum()


def bug():
    x, w = torch.randn(4, 3), torch.randn(3, 2, requires_grad=True)
    loss = torch.compile(scaled_gate, backend="aot_eager")(x, w)
    loss.backward()


if sys.argv[1:] != ["bug"]:
    train()
bug()
