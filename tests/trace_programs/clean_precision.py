# expect-kind: none
# In-place writes that are fine: nothing a live graph needs is touched before its backward.
import copy

import torch
from torch import nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 8), nn.BatchNorm1d(8), nn.ReLU(inplace=True), nn.Linear(8, 1))
ema = copy.deepcopy(model).requires_grad_(False)
params = list(model.parameters())
opt = torch.optim.SGD(params, lr=0.1, momentum=0.9)
x = torch.randn(16, 4)
total = 0.0
for step in range(3):
    out = model(x)
    loss = out.pow(2).mean()
    opt.zero_grad()
    loss.backward(retain_graph=True)
    torch.nn.utils.clip_grad_norm_(params, 1.0)  # writes .grad, not the saved weights
    out.abs().mean().backward()  # second backward through the retained graph, before any write
    total += loss.item()
    opt.step()
    with torch.no_grad():
        for e, p in zip(ema.parameters(), params):
            e.mul_(0.9).add_(p, alpha=0.1)
    hidden = model[0](x).clone()
    hidden.mul_(2)  # a clone: the saves of model[0] are untouched
    buf = torch.zeros(3)
    buf[0] = 1.0
    buf += 1
    hidden.sum().backward()
print("total", round(total, 4))
