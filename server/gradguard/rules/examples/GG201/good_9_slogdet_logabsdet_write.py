import torch
from torch import nn

# slogdet's backward keeps the sign, not the log-determinant: writing the latter in place is fine.
torch.manual_seed(0)
weight = nn.Parameter(torch.eye(4) + 0.1 * torch.randn(4, 4))
x = torch.randn(16, 4)
y = x @ weight
sign, logabsdet = torch.linalg.slogdet(weight)
logabsdet.mul_(16)
loss = 0.5 * y.pow(2).sum() - logabsdet
loss.backward()
