import torch
from torch import nn

# torch.flatten(h) of a contiguous h is a view of it: the in-place write reaches the output tanh saved.
torch.manual_seed(0)
encoder = nn.Linear(4, 6)
h = torch.tanh(encoder(torch.randn(3, 4)))
codes = torch.flatten(h)
codes.mul_(2)  # <- GG201
loss = h.pow(2).sum() + codes.sum()
loss.backward()
