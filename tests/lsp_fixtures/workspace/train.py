import torch
from model import Net

net = Net()
out = net(torch.rand(2, 4))
