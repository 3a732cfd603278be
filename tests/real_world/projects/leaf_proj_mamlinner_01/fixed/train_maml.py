import copy

import torch
import torch.nn as nn
import torch.nn.functional as F

from meta.learner import adapt
from meta.tasks import sine_task

torch.manual_seed(0)
g = torch.Generator().manual_seed(0)
net = nn.Sequential(nn.Linear(1, 40), nn.ReLU(), nn.Linear(40, 1))
meta_opt = torch.optim.Adam(net.parameters(), lr=1e-3)
for it in range(3):
    (xs, ys), (xq, yq) = sine_task(g)
    fast = adapt(copy.deepcopy(net), F.mse_loss, xs, ys)
    meta_loss = F.mse_loss(fast(xq), yq)
    meta_opt.zero_grad()
    meta_loss.backward()
    for p, fp in zip(net.parameters(), fast.parameters()):
        p.grad = fp.grad
    meta_opt.step()
    print(it, meta_loss.item())
