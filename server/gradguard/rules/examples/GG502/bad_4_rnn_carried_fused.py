import copy

import torch
from torch import nn

torch.manual_seed(0)
w_ih, w_hh = nn.Linear(2, 4), nn.Linear(4, 4, bias=False)
opt = torch.optim.SGD([*w_ih.parameters(), *w_hh.parameters()], lr=0.5, fused=True)
xs = torch.randn(3, 1, 2)
snapshots = []
h = torch.zeros(1, 4)
for t in range(3):
    snapshots.append((copy.deepcopy(w_ih), copy.deepcopy(w_hh)))
    h_next = torch.tanh(w_ih(xs[t]) + w_hh(h))
    loss = h_next.pow(2).sum()
    opt.zero_grad()
    loss.backward(retain_graph=True)
    opt.step()  # <- GG502
    h = h_next

ref_h = torch.zeros(1, 4)
for (ih, hh), x in zip(snapshots, xs):
    ref_h = torch.tanh(ih(x) + hh(ref_h))
true_grad = sum(torch.autograd.grad(ref_h.pow(2).sum(), [ih.weight for ih, _ in snapshots]))
if not torch.allclose(w_ih.weight.grad, true_grad):
    print("wrong gradient:", (w_ih.weight.grad - true_grad).abs().max().item())
