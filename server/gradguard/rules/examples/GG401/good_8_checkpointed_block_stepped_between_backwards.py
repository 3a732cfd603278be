import torch
from torch import nn
from torch.utils.checkpoint import checkpoint

# A non-reentrant checkpoint keeps none of what the block saved: its backward recomputes the block from the
# current weights, so the step between the two backwards does not raise (the plain `block(x)` would).
torch.manual_seed(0)
block = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 4))
opt = torch.optim.SGD(block.parameters(), lr=0.1)
out = checkpoint(block, torch.randn(2, 4), use_reentrant=False)
for _ in range(2):
    opt.zero_grad()
    out.pow(2).mean().backward(retain_graph=True)
    opt.step()
