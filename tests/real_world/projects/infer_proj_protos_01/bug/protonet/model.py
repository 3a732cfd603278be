import torch
import torch.nn as nn
import torch.nn.functional as F


class ProtoClassifier(nn.Module):
    def __init__(self, d_in=10, d=16, n_classes=4):
        super().__init__()
        self.embed = nn.Sequential(nn.Linear(d_in, d), nn.ReLU(), nn.Linear(d, d))
        self.register_buffer("prototypes", torch.zeros(n_classes, d))

    def forward(self, x):
        return F.linear(self.embed(x), self.prototypes)
