import torch
from torch import nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 16), nn.Tanh(), nn.Linear(16, 1))
with torch.no_grad():
    for p in model.parameters():
        p.mul_(0.5)
    model[2].bias.zero_()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.rand(8, 4), torch.rand(8, 1)
for _ in range(3):
    opt.zero_grad()
    loss = nn.functional.mse_loss(model(x), y)
    loss.backward()
    opt.step()
