import torch.nn as nn


class Backbone(nn.Module):
    def __init__(self, dim=8, hidden=16):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(dim, hidden), nn.ReLU())

    def forward(self, x):
        return self.net(x)
