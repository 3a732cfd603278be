# expect-kind: stale-save
# Two residual updates written in place: LayerNorm saved x on both lines, and each `+=` overwrites it. Backward
# fails at the second line's save; the first line's is the same bug, seen at its write.
import torch
from torch import nn

torch.manual_seed(0)
ln1, ln2 = nn.LayerNorm(8), nn.LayerNorm(8)
attn = nn.Linear(8, 8)
mlp = nn.Sequential(nn.Linear(8, 32), nn.GELU(), nn.Linear(32, 8))
x = torch.randn(4, 8) + 0
x += attn(ln1(x))  # expect: seen
x += mlp(ln2(x))  # expect: save, write
x.sum().backward()
