import torch
import torch.nn as nn


class Denoiser(nn.Module):
    def __init__(self, dim=8, hidden=32, steps=50):
        super().__init__()
        self.t_embed = nn.Embedding(steps, hidden)
        self.inp = nn.Linear(dim, hidden)
        self.out = nn.Sequential(nn.SiLU(), nn.Linear(hidden, dim))

    def forward(self, x_t, t):
        return self.out(self.inp(x_t) + self.t_embed(t))
