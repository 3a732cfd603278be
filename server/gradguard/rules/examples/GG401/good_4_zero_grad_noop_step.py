import torch
from torch import nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.Linear(8, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.rand(5, 3)
out = model(x)
l1 = out.pow(2).mean()
l2 = out.abs().mean()
opt.zero_grad()
opt.step()
l1.backward(retain_graph=True)
l2.backward()
opt.step()
