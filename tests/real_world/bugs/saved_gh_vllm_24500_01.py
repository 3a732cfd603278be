import torch
import torch.nn as nn

torch.manual_seed(0)


class LayerScale(nn.Module):
    def __init__(self, dim, init_values=1e-5):
        super().__init__()
        self.gamma = nn.Parameter(init_values * torch.ones(dim))

    def forward(self, x):
        return x * self.gamma


class Attention(nn.Module):
    def __init__(self, dim, num_heads=2):
        super().__init__()
        self.attn = nn.MultiheadAttention(dim, num_heads, batch_first=True)

    def forward(self, x, mask=None):
        return self.attn(x, x, x, key_padding_mask=mask, need_weights=False)[0]


class Block(nn.Module):
    def __init__(self, dim, mlp_ratio=2.0):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim, eps=1e-6)
        self.attn = Attention(dim)
        self.ls1 = LayerScale(dim)
        self.norm2 = nn.LayerNorm(dim, eps=1e-6)
        self.mlp = nn.Sequential(nn.Linear(dim, int(dim * mlp_ratio)), nn.GELU(), nn.Linear(int(dim * mlp_ratio), dim))
        self.ls2 = LayerScale(dim)

    def forward(self, x, mask=None):
        x += self.ls1(self.attn(self.norm1(x), mask))
        x += self.ls2(self.mlp(self.norm2(x)))
        return x


blocks = nn.ModuleList(Block(8) for _ in range(2))
x = nn.Linear(4, 8)(torch.randn(2, 5, 4))
for blk in blocks:
    x = blk(x)
x.pow(2).mean().backward()
