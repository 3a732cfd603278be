import torch
from torch import nn
from torch.utils.checkpoint import checkpoint

# A checkpoint saves its tensor inputs to recompute the block at backward: writing one afterwards raises there.
torch.manual_seed(0)
block = nn.Linear(4, 4)
h = nn.Linear(4, 4)(torch.randn(2, 4))
out = checkpoint(block, h, use_reentrant=False)
h.mul_(0.5)  # <- GG201
out.sum().backward()
