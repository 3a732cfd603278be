# The hand fix of ../two_losses_step_between.py: l2 is computed from a forward run after the step.
import torch
from torch import nn

model = nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.Linear(8, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.rand(5, 3)
out = model(x)
l1 = out.pow(2).mean()
opt.zero_grad()
l1.backward()
opt.step()
l2 = model(x).abs().mean()
l2.backward()
