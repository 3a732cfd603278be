import torch
from torch import nn
gru = nn.GRU(2, 3)
opt = torch.optim.SGD(gru.parameters(), lr=0.1)
xs = torch.randn(4, 2, 1, 2)
hidden = torch.zeros(1, 1, 3)
for t in range(4):
    out, hidden = gru(xs[t], hidden.detach())
    loss = out.pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
