import torch
from torch import nn

# The same commitment term through the minimum's `.values`, with the EMA update of the codebook after the
# backward that needed it.
torch.manual_seed(0)
enc = nn.Linear(12, 8)
codebook = torch.randn(8, 16)
z = enc(torch.randn(32, 12))
dist = z.pow(2).sum(1, keepdim=True) - 2 * z @ codebook + codebook.pow(2).sum(0, keepdim=True)
nearest = dist.min(1)
loss = nearest.values.mean()
loss.backward()
with torch.no_grad():
    codebook.copy_(0.99 * codebook + 0.01 * torch.randn(8, 16))
