import torch
import torch.nn as nn


class ProjectionHead(nn.Module):
    def __init__(self, d_feat=32, d_proj=8):
        super().__init__()
        self.fc = nn.Linear(d_feat, d_proj)

    def forward(self, h):
        return torch.tanh(self.fc(h))
