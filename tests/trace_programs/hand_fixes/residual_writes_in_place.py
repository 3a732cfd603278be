# The hand fix of ../residual_writes_in_place.py: both residual updates out of place.
import torch
from torch import nn

torch.manual_seed(0)
ln1, ln2 = nn.LayerNorm(8), nn.LayerNorm(8)
attn = nn.Linear(8, 8)
mlp = nn.Sequential(nn.Linear(8, 32), nn.GELU(), nn.Linear(32, 8))
x = torch.randn(4, 8) + 0
x = x + attn(ln1(x))
x = x + mlp(ln2(x))
x.sum().backward()
