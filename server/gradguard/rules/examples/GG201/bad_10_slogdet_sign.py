import torch
from torch import nn

# Normalizing-flow log-determinant: slogdet's backward keeps the sign it returned.
torch.manual_seed(0)
weight = nn.Parameter(torch.eye(4) + 0.1 * torch.randn(4, 4))
x = torch.randn(16, 4)
y = x @ weight
sign, logabsdet = torch.linalg.slogdet(weight)
sign.abs_()  # <- GG201
loss = 0.5 * y.pow(2).sum() - 16 * logabsdet * sign
loss.backward()
