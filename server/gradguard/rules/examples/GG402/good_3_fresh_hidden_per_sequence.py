import torch
from torch import nn

torch.manual_seed(0)
cell = nn.RNNCell(3, 5)
readout = nn.Linear(5, 1)
opt = torch.optim.SGD([*cell.parameters(), *readout.parameters()], lr=0.05)
batches = torch.randn(3, 4, 2, 3)
targets = torch.randn(3, 2, 1)
for seq, y in zip(batches, targets):
    h = torch.zeros(2, 5)
    for x in seq:
        h = cell(x, h)
    loss = nn.functional.mse_loss(readout(h), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
