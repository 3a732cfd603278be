import torch
from torch import nn

torch.manual_seed(0)
qkv_conv = nn.Conv2d(3, 12, kernel_size=1)


def split_heads(x, heads):
    batch, channels, height, width = x.size()
    return x.reshape(batch, heads, channels // heads, height, width)


qkv = qkv_conv(torch.randn(2, 3, 4, 4))
q, k, v = torch.split(qkv, [4, 4, 4], dim=1)
q = split_heads(q, 2)
q *= 2 ** -0.5  # <- GG103
logits = torch.einsum("bhdxy,bhdxy->bhxy", q, split_heads(k, 2))
logits.softmax(dim=1).mean().backward()
