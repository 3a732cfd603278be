import torch
from torch import nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
x = torch.rand(5, 4)
target = torch.tensor([0, 1, 0, 1, 1])
eps = 0.1
delta = torch.zeros_like(x, requires_grad=True)
delta.uniform_(-eps, eps)  # <- GG101
loss = nn.functional.cross_entropy(model(x + delta), target)
loss.backward()
print(delta.grad.abs().max())
