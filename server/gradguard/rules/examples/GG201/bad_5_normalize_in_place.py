import torch
from torch import nn

torch.manual_seed(0)
proj = nn.Linear(8, 4)
x = torch.randn(6, 8)
z = proj(x)
norms = z.norm(dim=1, keepdim=True)
z.div_(norms)  # <- GG201
sim = z @ z.t()
loss = sim.triu(diagonal=1).pow(2).sum()
loss.backward()
