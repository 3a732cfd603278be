import torch.nn as nn


class PostActBlock(nn.Module):
    def __init__(self, dim=12):
        super().__init__()
        self.fc = nn.Linear(dim, dim)
        self.bn = nn.BatchNorm1d(dim)
        self.act = nn.GELU()

    def forward(self, x):
        return x + self.act(self.bn(self.fc(x)))
