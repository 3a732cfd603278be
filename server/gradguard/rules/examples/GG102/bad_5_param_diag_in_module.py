import torch
from torch import nn


class Mixer(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.W = nn.Parameter(torch.randn(n, n) * 0.1)
        self.W.diagonal().fill_(1.0)  # <- GG102

    def forward(self, x):
        return x @ self.W


torch.manual_seed(0)
m = Mixer(3)
loss = m(torch.randn(2, 3)).pow(2).sum()
loss.backward()
