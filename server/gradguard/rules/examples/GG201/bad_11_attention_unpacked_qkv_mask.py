import torch
from torch import nn

# softmax keeps its output for backward; the heads come from unpacking one permuted projection.


class CausalAttention(nn.Module):
    def __init__(self, dim=8, heads=2):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, dim * 3)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x, mask):
        B, T, C = x.shape
        q, k, v = self.qkv(x).view(B, T, 3, self.heads, C // self.heads).permute(2, 0, 3, 1, 4)
        att = (q @ k.transpose(-2, -1)).softmax(dim=-1)
        att.masked_fill_(mask, 0.0)  # <- GG201
        out = (att @ v).transpose(1, 2).reshape(B, T, C)
        return self.proj(out)


torch.manual_seed(0)
attn = CausalAttention()
x = torch.randn(2, 5, 8)
mask = torch.ones(5, 5, dtype=torch.bool).triu(1)
attn(x, mask).sum().backward()
