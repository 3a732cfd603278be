import torch
from torch import nn

torch.manual_seed(0)
head = nn.Linear(4, 4)
x = torch.randn(2, 4)
out = head(x)
mean, log_std = out.chunk(2, dim=1)
loss = (mean.pow(2) + log_std.exp()).sum()
loss.backward()
with torch.no_grad():
    stats = out.detach().clone()
    a, b = stats.chunk(2, dim=1)
    b.clamp_(-2.0, 2.0)
print(stats)
