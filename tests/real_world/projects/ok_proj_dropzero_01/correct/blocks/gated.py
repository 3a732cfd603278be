import torch
import torch.nn as nn


class GatedUnit(nn.Module):
    def __init__(self, dim, hidden, proj_drop=0.0):
        super().__init__()
        self.fc = nn.Linear(dim, 2 * hidden)
        self.drop = nn.Dropout(proj_drop, inplace=True)
        self.out = nn.Linear(hidden, dim)

    def forward(self, x):
        a, g = self.fc(x).chunk(2, dim=-1)
        h = a * torch.sigmoid(g)
        h = self.drop(h)
        return self.out(h)
