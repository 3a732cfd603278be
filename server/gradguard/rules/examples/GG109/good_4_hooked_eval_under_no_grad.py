import torch
from torch import nn

torch.manual_seed(0)
net = nn.Sequential(nn.Linear(5, 8), nn.ReLU(inplace=True), nn.Linear(8, 1))
net[0].register_full_backward_hook(lambda module, grad_in, grad_out: None)
with torch.no_grad():
    print(net(torch.randn(3, 5)).shape)  # no graph: nothing is wrapped, the in-place ReLU is fine
net[1].inplace = False
net(torch.randn(3, 5)).sum().backward()
