import math

import torch


def artist_works(batch=16, points=15, generator=None):
    xs = torch.linspace(-1, 1, points).expand(batch, points)
    r = 0.02 * torch.randn(batch, 1, generator=generator)
    return torch.sin(xs * math.pi) + r
