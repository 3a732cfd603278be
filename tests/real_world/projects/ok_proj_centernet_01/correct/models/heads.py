import torch.nn as nn


class CenterHead(nn.Module):
    def __init__(self, d=8, hidden=16):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(d, hidden), nn.ReLU(inplace=True))
        self.hm = nn.Linear(hidden, 1)

    def forward(self, x):
        return self.hm(self.body(x))
