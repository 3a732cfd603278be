import torch
from torch import nn

# A piece cut by chunk() along the last dimension, reshaped to split that dimension into heads: the reshape is a
# view whatever the strides, and so is the transpose, so `q` is still one of several views.


class SelfAttention(nn.Module):
    def __init__(self, dim=8, heads=2):
        super().__init__()
        self.heads, self.head_dim = heads, dim // heads
        self.scale = self.head_dim ** -0.5
        self.qkv = nn.Linear(dim, dim * 3)

    def forward(self, x):
        B, N, C = x.shape
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        q = q.reshape(B, N, self.heads, self.head_dim).transpose(1, 2)
        k = k.reshape(B, N, self.heads, self.head_dim).transpose(1, 2)
        v = v.reshape(B, N, self.heads, self.head_dim).transpose(1, 2)
        q.mul_(self.scale)  # <- GG103
        att = (q @ k.transpose(-2, -1)).softmax(dim=-1)
        return (att @ v).transpose(1, 2).reshape(B, N, C)


torch.manual_seed(0)
SelfAttention()(torch.randn(2, 5, 8)).sum().backward()
