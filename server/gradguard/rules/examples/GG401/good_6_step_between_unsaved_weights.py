import torch
from torch import nn

torch.manual_seed(0)
encoder = nn.Sequential(nn.Linear(6, 16), nn.Tanh())
cls_head = nn.Linear(16, 3)
reg_head = nn.Linear(16, 1)
params = [*encoder.parameters(), *cls_head.parameters(), *reg_head.parameters()]
opt = torch.optim.SGD(params, lr=0.05)
x = torch.randn(10, 6)
labels = torch.randint(0, 3, (10,))
values = torch.randn(10, 1)
feats = encoder(x)
cls_loss = nn.functional.cross_entropy(cls_head(feats), labels)
reg_loss = nn.functional.mse_loss(reg_head(feats), values)
opt.zero_grad()
cls_loss.backward(retain_graph=True)
opt.step()
reg_loss.backward()
opt.step()
