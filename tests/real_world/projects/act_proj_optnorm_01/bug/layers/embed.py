import torch
import torch.nn as nn


class TanhEmbed(nn.Module):
    def __init__(self, d_in, dim):
        super().__init__()
        self.proj = nn.Linear(d_in, dim)

    def forward(self, x):
        return torch.tanh(self.proj(x))
