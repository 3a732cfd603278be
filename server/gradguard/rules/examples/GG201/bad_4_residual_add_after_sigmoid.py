import torch
from torch import nn

torch.manual_seed(0)
lin = nn.Linear(4, 4)
x = torch.randn(2, 4)
out = torch.sigmoid(lin(x))
out += x  # <- GG201
out.pow(2).sum().backward()
