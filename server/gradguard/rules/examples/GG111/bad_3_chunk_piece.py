import torch
from torch import nn


class Gate(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(4, 8)

    def forward(self, x):
        value, gate = self.proj(x).chunk(2, dim=-1)
        gate.detach_()  # <- GG111
        return value * torch.sigmoid(gate)


torch.manual_seed(0)
model = Gate()
model(torch.randn(3, 4)).sum().backward()
