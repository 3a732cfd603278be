import torch
from torch import nn

# The unpacked q, k, v are views of one tensor: scale into a new tensor instead of writing q.


class SelfAttention(nn.Module):
    def __init__(self, dim=8, heads=2):
        super().__init__()
        self.heads = heads
        self.scale = (dim // heads) ** -0.5
        self.qkv = nn.Linear(dim, dim * 3)

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.qkv(x).reshape(B, T, 3, self.heads, C // self.heads).permute(2, 0, 3, 1, 4)
        q = q * self.scale
        att = (q @ k.transpose(-2, -1)).softmax(dim=-1)
        return (att @ v).transpose(1, 2).reshape(B, T, C)


torch.manual_seed(0)
SelfAttention()(torch.randn(2, 5, 8)).sum().backward()
