import torch
from torch import nn

torch.manual_seed(0)


class Attention(nn.Module):
    def __init__(self, dim=16, num_heads=4):
        super().__init__()
        self.num_heads = num_heads
        self.head_dim = dim // num_heads
        self.scale = self.head_dim ** -0.5
        self.qkv = nn.Linear(dim, dim * 3)

    def forward(self, x):
        B, N, C = x.shape
        # the same views of the split pieces, scaled out of place
        q, k, v = self.qkv(x).split(C, dim=-1)
        q = q.reshape(B, N, self.num_heads, self.head_dim).transpose(1, 2)
        k = k.reshape(B, N, self.num_heads, self.head_dim).transpose(1, 2)
        v = v.reshape(B, N, self.num_heads, self.head_dim).transpose(1, 2)
        q = q * self.scale  # out of place, as timm writes it
        attn = (q @ k.transpose(-2, -1)).softmax(dim=-1)
        return (attn @ v).transpose(1, 2).reshape(B, N, C)


Attention()(torch.randn(2, 5, 16)).pow(2).mean().backward()
