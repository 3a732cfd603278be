import torch
from torch import nn

torch.manual_seed(0)
gain = nn.Parameter(torch.ones(4))
x = torch.randn(3, 4)
scaled = torch.empty_like(x)
torch.mul(x, gain, out=scaled)  # <- GG104
scaled.sum().backward()
