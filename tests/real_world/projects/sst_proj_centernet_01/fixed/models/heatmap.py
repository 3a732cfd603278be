import torch
import torch.nn as nn


class HeatmapHead(nn.Module):
    def __init__(self, hidden=16):
        super().__init__()
        self.out = nn.Linear(hidden, 1)

    def forward(self, feats):
        return torch.sigmoid(self.out(feats))
