from math import pi

import torch
from torch import nn


class GoldenGatePoPENd(nn.Module):
    def __init__(self, dim_pos, heads, dim_head, init_learned_bias_uniform=False):
        super().__init__()
        self.register_buffer("freqs", torch.randn(heads, dim_head, dim_pos))
        self.learned_bias = nn.Parameter(torch.zeros(heads, dim_head))
        if init_learned_bias_uniform:
            with torch.no_grad():
                self.learned_bias.uniform_(-2.0 * pi, 0.0)

    def forward(self, pos):
        theta = (self.freqs[None, :, None] * pos[:, None, :, None]).sum(-1)
        bias = self.learned_bias.clamp(-2.0 * pi, 0.0)
        return theta, bias[:, None]


class ViTND(nn.Module):
    def __init__(self, ndim=2, dim=8, heads=2, dim_head=4, pope_init_learned_bias_uniform=False):
        super().__init__()
        self.polar_emb = GoldenGatePoPENd(ndim, heads, dim_head,
                                          init_learned_bias_uniform=pope_init_learned_bias_uniform)
        self.to_v = nn.Linear(dim, heads * dim_head)

    def forward(self, x, pos):
        theta, bias = self.polar_emb(pos)
        v = self.to_v(x).view(x.shape[0], x.shape[1], 2, 4).transpose(1, 2)
        return (v * torch.cos(theta + bias)).sum()


model = ViTND(pope_init_learned_bias_uniform=True)
x, pos = torch.randn(2, 5, 8), torch.rand(2, 5, 2)
model(x, pos).backward()
