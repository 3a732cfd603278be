import torch
from torch import nn


def train_step(trunk, head_a, head_b, opt, x, ya, yb):
    feats = torch.tanh(trunk(x))
    loss_a = nn.functional.mse_loss(head_a(feats), ya)
    loss_b = nn.functional.mse_loss(head_b(feats), yb)
    opt.zero_grad()
    loss_a.backward()
    loss_b.backward()  # <- GG404
    opt.step()


torch.manual_seed(0)
trunk, head_a, head_b = nn.Linear(4, 8), nn.Linear(8, 1), nn.Linear(8, 1)
opt = torch.optim.SGD([*trunk.parameters(), *head_a.parameters(), *head_b.parameters()], lr=0.1)
train_step(trunk, head_a, head_b, opt, torch.randn(3, 4), torch.randn(3, 1), torch.randn(3, 1))
