import copy

import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.inp = nn.Linear(4, 8)
        self.out = nn.Linear(8, 1)

    def forward(self, x):
        return self.out(torch.relu(self.inp(x)))


class Trainer:
    def __init__(self, decay=0.99):
        self.model = Net()
        self.ema = copy.deepcopy(self.model)
        self.opt = torch.optim.SGD(self.model.parameters(), lr=0.1)
        self.decay = decay

    def update_ema(self):
        with torch.no_grad():
            for ema_p, p in zip(self.ema.parameters(), self.model.parameters()):
                ema_p.mul_(self.decay).add_(p.detach(), alpha=1 - self.decay)

    def step(self, x):
        loss = self.model(x).pow(2).mean()
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        self.update_ema()
        return loss


trainer = Trainer()
for _ in range(3):
    trainer.step(torch.randn(16, 4))
print(sum(p.sum().item() for p in trainer.ema.parameters()))
