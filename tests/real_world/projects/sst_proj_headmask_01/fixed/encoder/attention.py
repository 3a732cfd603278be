import torch
import torch.nn as nn

from encoder.pruning import apply_head_mask


class SelfAttention(nn.Module):
    def __init__(self, dim=16, heads=4):
        super().__init__()
        self.h, self.d = heads, dim // heads
        self.qkv = nn.Linear(dim, 3 * dim)

    def forward(self, x, head_mask=None):
        B, N, C = x.shape
        qkv = self.qkv(x).reshape(B, N, 3, self.h, self.d).permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]
        probs = torch.softmax(q @ k.transpose(-1, -2) / self.d ** 0.5, dim=-1)
        if head_mask is not None:
            probs = apply_head_mask(probs, head_mask)
        return (probs @ v).transpose(1, 2).reshape(B, N, C)
