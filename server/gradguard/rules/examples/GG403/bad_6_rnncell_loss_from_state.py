import torch
from torch import nn

torch.manual_seed(0)
cell = nn.RNNCell(3, 5)
readout = nn.Linear(5, 1)
opt = torch.optim.SGD([*cell.parameters(), *readout.parameters()], lr=0.05)
xs = torch.randn(6, 2, 3)
ys = torch.randn(6, 2, 1)
h = torch.zeros(2, 5)
for t in range(6):
    h = cell(xs[t], h)  # <- GG403
    loss = nn.functional.mse_loss(readout(h), ys[t])
    opt.zero_grad()
    loss.backward()
    opt.step()
