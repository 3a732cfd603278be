import copy

import torch
import torch.nn as nn


class EMA:
    def __init__(self, model, decay=0.999):
        self.decay = decay
        self.shadow = copy.deepcopy(model)
        for p in self.shadow.parameters():
            p.requires_grad_(False)

    def update(self, model):
        for ema_p, p in zip(self.shadow.parameters(), model.parameters()):
            ema_p.mul_(self.decay).add_(p.detach(), alpha=1 - self.decay)


def train(model, ema, steps=3):
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(steps):
        loss = model(torch.randn(4, 3)).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        ema.update(model)


torch.manual_seed(0)
net = nn.Sequential(nn.Linear(3, 8), nn.ReLU(), nn.Linear(8, 1))
train(net, EMA(net))
