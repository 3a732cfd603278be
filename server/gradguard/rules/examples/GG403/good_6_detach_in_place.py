import torch
from torch import nn
cell = nn.GRU(2, 3)
opt = torch.optim.SGD(cell.parameters(), lr=0.1)
h = torch.zeros(1, 1, 3)
xs = torch.randn(4, 2, 1, 2)
for t in range(4):
    out, h = cell(xs[t], h)
    loss = out.pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    h.detach_()
