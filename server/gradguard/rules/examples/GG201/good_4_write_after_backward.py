import torch
from torch import nn

torch.manual_seed(0)
proj = nn.Linear(8, 4)
x = torch.randn(6, 8)
z = proj(x)
norms = z.norm(dim=1, keepdim=True)
loss = (z / norms).sum()
loss.backward()
z = z.detach()
z.div_(norms.detach())
print(z.norm(dim=1))
