import math

import torch
import torch.nn as nn

from .coupling import AffineCoupling


class RealNVP(nn.Module):
    def __init__(self, dim=4, n_layers=4):
        super().__init__()
        self.layers = nn.ModuleList(AffineCoupling(dim, flip=bool(i % 2)) for i in range(n_layers))

    def forward(self, x):
        log_det = torch.zeros(x.shape[0])
        z = x
        for layer in self.layers:
            z, ld = layer(z)
            log_det = log_det + ld
        return z, log_det

    def nll(self, x):
        z, log_det = self(x)
        prior = -0.5 * (z ** 2).sum(dim=1) - 0.5 * z.shape[1] * math.log(2 * math.pi)
        return -(prior + log_det).mean()
