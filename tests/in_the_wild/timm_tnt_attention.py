# Reduced from timm 1.0.31, timm/models/tnt.py, class Attention (lines 45-67): `attn_drop` is built as
# nn.Dropout(attn_drop, inplace=True) and applied to the softmax output, which softmax saved for backward.
# Training TNT with attn_drop_rate > 0 fails at backward (the default rate 0 hides it).
import torch
from torch import nn


class Attention(nn.Module):
    def __init__(self, dim=8, num_heads=2, attn_drop=0.1):
        super().__init__()
        self.num_heads = num_heads
        self.qk = nn.Linear(dim, dim * 2)
        self.attn_drop = nn.Dropout(attn_drop, inplace=True)

    def forward(self, x):
        B, N, C = x.shape
        q, k = self.qk(x).reshape(B, N, 2, self.num_heads, C // self.num_heads).permute(2, 0, 3, 1, 4).unbind(0)
        attn = (q @ k.transpose(-2, -1)).softmax(dim=-1)
        attn = self.attn_drop(attn)  # <- GG202
        return attn


model = Attention().train()
model(torch.randn(2, 4, 8)).sum().backward()
