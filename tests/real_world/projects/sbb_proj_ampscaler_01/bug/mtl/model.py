import torch.nn as nn


class MultiTaskNet(nn.Module):
    def __init__(self, d=10, h=32):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(d, h), nn.ReLU(), nn.Linear(h, h), nn.ReLU())
        self.cls = nn.Linear(h, 3)
        self.reg = nn.Linear(h, 1)

    def forward(self, x):
        f = self.trunk(x)
        return self.cls(f), self.reg(f).squeeze(-1)
