import torch
import torch.nn as nn


class ProjectionEncoder(nn.Module):
    def __init__(self, dim, hidden=32, out_dim=8):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(dim, hidden), nn.ReLU(), nn.Linear(hidden, hidden))
        self.projector = nn.Sequential(nn.ReLU(), nn.Linear(hidden, out_dim))

    def forward(self, x):
        h = self.backbone(x)
        return h, torch.tanh(self.projector(h))
