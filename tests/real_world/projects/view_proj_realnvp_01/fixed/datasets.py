import math

import torch


def two_moons(n=128, noise=0.05):
    g = torch.Generator().manual_seed(0)
    t = torch.rand(n, generator=g) * math.pi
    upper = torch.stack([torch.cos(t), torch.sin(t)], dim=1)
    lower = torch.stack([1 - torch.cos(t), 0.5 - torch.sin(t)], dim=1)
    pts = torch.cat([upper[: n // 2], lower[n // 2:]], dim=0)
    pts = pts + noise * torch.randn(pts.shape, generator=g)
    return torch.cat([pts, pts.flip(1)], dim=1)
