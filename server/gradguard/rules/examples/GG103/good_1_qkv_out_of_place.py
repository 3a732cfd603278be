import torch
from torch import nn


class SelfAttention(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.qkv = nn.Linear(dim, 3 * dim)
        self.scale = dim ** -0.5

    def forward(self, x):
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        q = q * self.scale
        attn = torch.softmax(q @ k.transpose(-2, -1), dim=-1)
        return attn @ v


torch.manual_seed(0)
layer = SelfAttention(8)
out = layer(torch.randn(2, 5, 8))
out.pow(2).mean().backward()
