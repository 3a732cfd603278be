import torch
from torch import nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 3))
x = torch.randn(6, 4)
loss = model(x).pow(2).sum()
model[2].bias.data.zero_()  # the bias is not saved: no gradient changes
model[2].weight.data.mul_(0.5)  # <- GG501
loss.backward()

torch.manual_seed(0)
reference = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 3))
reference(x).pow(2).sum().backward()
if not torch.allclose(model[0].weight.grad, reference[0].weight.grad):
    print("wrong gradient:", (model[0].weight.grad - reference[0].weight.grad).abs().max().item())
