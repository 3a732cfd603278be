import torch
from torch import nn

# A VQ-VAE codebook kept as a plain tensor: the distance's matmul saves the codebook for the encoder's gradient,
# the commitment term reaches that matmul through the minimum's `.values`, and the EMA update copies into the
# codebook (under no_grad, which still bumps its version) before the backward.
torch.manual_seed(0)
enc = nn.Linear(12, 8)
codebook = torch.randn(8, 16)
z = enc(torch.randn(32, 12))
dist = z.pow(2).sum(1, keepdim=True) - 2 * z @ codebook + codebook.pow(2).sum(0, keepdim=True)
nearest = dist.min(1)
with torch.no_grad():
    codebook.copy_(0.99 * codebook + 0.01 * torch.randn(8, 16))  # <- GG201
loss = nearest.values.mean()
loss.backward()
