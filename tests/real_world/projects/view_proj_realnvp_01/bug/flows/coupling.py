import torch
import torch.nn as nn


class AffineCoupling(nn.Module):
    """y_a = x_a, y_b = x_b * exp(s(x_a)) + t(x_a)."""

    def __init__(self, dim, hidden=32, flip=False):
        super().__init__()
        self.flip = flip
        self.st = nn.Sequential(nn.Linear(dim // 2, hidden), nn.Tanh(), nn.Linear(hidden, dim))

    def forward(self, x):
        x_a, x_b = x.chunk(2, dim=1)
        if self.flip:
            x_a, x_b = x_b, x_a
        s, t = self.st(x_a).chunk(2, dim=1)
        s = torch.tanh(s)
        x_b.mul_(torch.exp(s)).add_(t)
        y = torch.cat([x_b, x_a] if self.flip else [x_a, x_b], dim=1)
        return y, s.sum(dim=1)
