import torch
from torch import nn

torch.manual_seed(0)
lin = nn.Linear(4, 4)
x = torch.randn(2, 4)
out = lin(x)
out += x
out.relu_()
out.pow(2).sum().backward()
