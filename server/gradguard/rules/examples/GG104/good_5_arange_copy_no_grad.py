import math

import torch
from torch import nn


class BesselBasis(nn.Module):
    def __init__(self, num_radial, cutoff=5.0):
        super().__init__()
        self.cutoff = cutoff
        self.freq = nn.Parameter(torch.empty(num_radial))
        self.reset_parameters()

    def reset_parameters(self):
        with torch.no_grad():
            self.freq.copy_(torch.arange(1, self.freq.numel() + 1) * math.pi)

    def forward(self, dist):
        dist = dist.unsqueeze(-1) / self.cutoff
        return (self.freq * dist).sin() / dist


torch.manual_seed(0)
basis = BesselBasis(4)
basis(torch.rand(6) + 0.5).sum().backward()
