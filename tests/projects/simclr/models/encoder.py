import torch.nn as nn


class Encoder(nn.Module):
    def __init__(self, dim=32):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(16, dim), nn.ReLU(), nn.Linear(dim, dim))

    def forward(self, x):
        return self.net(x)


class ProjectionHead(nn.Module):
    def __init__(self, dim=32, out=8):
        super().__init__()
        self.fc1 = nn.Linear(dim, dim)
        self.fc2 = nn.Linear(dim, out)

    def forward(self, h):
        return self.fc2(self.fc1(h).relu())
