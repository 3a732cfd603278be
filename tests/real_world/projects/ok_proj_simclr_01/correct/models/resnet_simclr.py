import torch
import torch.nn as nn


class SimCLRNet(nn.Module):
    def __init__(self, d_in=16, d_feat=32, d_proj=8):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(d_in, d_feat), nn.ReLU())
        self.proj = nn.Linear(d_feat, d_proj)

    def forward(self, x):
        return torch.tanh(self.proj(self.backbone(x)))
