import torch
from torch import nn

torch.manual_seed(0)
lin = nn.Linear(3, 8)
x = torch.randn(4, 3)
gates = lin(x)
i, f = gates.chunk(2, dim=1)
f += 1.0  # <- GG103
c = torch.sigmoid(f) * torch.tanh(i)
c.sum().backward()
