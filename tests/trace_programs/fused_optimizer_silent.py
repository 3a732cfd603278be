# expect-kind: silent-write
import torch
from torch import nn

torch.manual_seed(0)
layer = nn.Linear(1, 1)
opt = torch.optim.SGD(layer.parameters(), lr=1.0, fused=True)
x = torch.ones(1, 1, requires_grad=True)
out = layer(x)  # expect: save
out.sum().backward(retain_graph=True)
opt.step()  # expect: write
x.grad = None
out.sum().backward()
print("x.grad", x.grad.item())
