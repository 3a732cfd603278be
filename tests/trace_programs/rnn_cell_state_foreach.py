# expect-kind: stale-save
import torch
from torch import nn

cell = nn.RNNCell(3, 5)
head = nn.Linear(5, 1)
params = [*cell.parameters(), *head.parameters()]
opt = torch.optim.SGD(params, lr=0.05, momentum=0.9, foreach=True)
h = torch.zeros(2, 5)
for t in range(4):
    x = torch.randn(2, 3)
    h_new = cell(x, h)  # expect: save
    loss = head(h_new).pow(2).mean()
    opt.zero_grad()
    loss.backward(retain_graph=True)
    opt.step()  # expect: write
    h = h_new
