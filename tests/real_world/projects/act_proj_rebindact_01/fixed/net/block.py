import torch
import torch.nn as nn


class ScaledSkipBlock(nn.Module):
    def __init__(self, dim=12):
        super().__init__()
        self.fc = nn.Linear(dim, dim)
        self.alpha = nn.Parameter(torch.full((dim,), 0.5))
        self.act = nn.GELU()
        self.out = nn.Linear(dim, dim)

    def forward(self, x):
        z = self.fc(x)
        skip = z * self.alpha
        return self.out(self.act(z)) + skip
