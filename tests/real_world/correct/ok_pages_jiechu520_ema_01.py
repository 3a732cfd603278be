import copy

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class EMA:
    def __init__(self, model, decay):
        self.model, self.decay = model, decay
        self.shadow, self.backup = {}, {}

    def register(self):
        for name, param in self.model.named_parameters():
            if param.requires_grad:
                self.shadow[name] = param.data.clone()

    def update(self):
        for name, param in self.model.named_parameters():
            if param.requires_grad:
                new_average = (1.0 - self.decay) * param.data + self.decay * self.shadow[name]
                self.shadow[name] = new_average.clone()

    def apply_shadow(self):
        for name, param in self.model.named_parameters():
            if param.requires_grad:
                self.backup[name] = param.data
                param.data = self.shadow[name]

    def restore(self):
        for name, param in self.model.named_parameters():
            if param.requires_grad:
                param.data = self.backup[name]
        self.backup = {}


class Trainer:
    def __init__(self, model):
        self.model = model
        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
        self.ema = EMA(model, 0.9)
        self.ema.register()

    def step(self, x, y):
        loss = F.cross_entropy(self.model(x), y)
        self.ema.apply_shadow()
        ema_loss = F.cross_entropy(self.model(x), y).item()
        self.ema.restore()
        self.optimizer.zero_grad()
        loss.backward()
        grads = [p.grad.clone() for p in self.model.parameters()]
        self.optimizer.step()
        self.ema.update()
        return grads


model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 3))
trainer = Trainer(model)
x, y = torch.randn(6, 4), torch.randint(0, 3, (6,))
trainer.step(x, y)
reference = copy.deepcopy(model)
grads = trainer.step(x, y)
F.cross_entropy(reference(x), y).backward()
if not all(torch.allclose(g, p.grad) for g, p in zip(grads, reference.parameters())):
    print("wrong gradient: backward used the EMA weights apply_shadow() swapped in through .data")
else:
    print("gradient ok")
