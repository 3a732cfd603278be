import torch
from torch import nn

torch.manual_seed(0)
model = nn.Linear(4, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
data = torch.randn(4, 3, 4)
targets = torch.randn(4, 3, 1)
accum = 2
opt.zero_grad()
for i in range(4):
    loss = nn.functional.mse_loss(model(data[i]), targets[i]) / accum
    loss.backward()
    if (i + 1) % accum == 0:
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad()
