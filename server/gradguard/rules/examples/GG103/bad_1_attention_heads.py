import torch
from torch import nn

torch.manual_seed(0)
dim = 8
to_qkv = nn.Linear(dim, 3 * dim)
x = torch.randn(2, 5, dim)
q, k, v = to_qkv(x).chunk(3, dim=-1)
q *= dim ** -0.5  # <- GG103
attn = torch.softmax(q @ k.transpose(-2, -1), dim=-1)
out = attn @ v
out.pow(2).mean().backward()
