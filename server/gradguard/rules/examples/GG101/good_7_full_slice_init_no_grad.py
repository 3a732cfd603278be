import math

import torch
from torch import nn


class R2Conv(nn.Module):
    def __init__(self, in_size, out_size, basis_size=6):
        super().__init__()
        self.in_size, self.out_size = in_size, out_size
        self.weights = nn.Parameter(torch.zeros(basis_size * in_size * out_size))
        self.basis = torch.randn(basis_size, 3, 3)
        self.reset_parameters()

    def reset_parameters(self):
        std = math.sqrt(2.0 / self.in_size)
        with torch.no_grad():
            self.weights[:] = torch.randn(self.weights.numel()) * std

    def forward(self, x):
        w = self.weights.view(self.out_size, self.in_size, -1)
        filters = torch.einsum("oib,bhw->oihw", w, self.basis)
        return nn.functional.conv2d(x, filters, padding=1)


torch.manual_seed(0)
conv = R2Conv(2, 4)
conv(torch.randn(1, 2, 6, 6)).pow(2).mean().backward()
