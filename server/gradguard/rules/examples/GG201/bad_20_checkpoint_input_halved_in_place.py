import torch
from torch import nn
from torch.utils.checkpoint import checkpoint

# A checkpointed residual stack: each layer's tanh output is saved by tanh (and is the next checkpoint's input);
# halving it in place "without allocating" changes what tanh's backward needs.
torch.manual_seed(0)
blocks = nn.ModuleList(nn.Sequential(nn.Linear(16, 64), nn.GELU(), nn.Linear(64, 16)) for _ in range(3))
h = torch.randn(8, 16)
for block in blocks:
    delta = checkpoint(block, h, use_reentrant=False)
    h = torch.tanh(h + delta)
    h.mul_(0.5)  # <- GG201
loss = h.pow(2).mean()
loss.backward()
