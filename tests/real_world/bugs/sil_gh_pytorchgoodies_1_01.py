import copy

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Trainer:
    def __init__(self, model, max_val=0.5, eps=1e-8):
        self.model = model
        self.max_val, self.eps = max_val, eps
        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

    def max_norm(self):
        for name, param in self.model.named_parameters():
            if "bias" not in name:
                norm = param.data.norm(2, dim=1, keepdim=True)
                desired = torch.clamp(norm, 0, self.max_val)
                param.data.mul_(desired / (self.eps + norm))

    def train_step(self, x, y):
        logits = self.model(x)
        loss = F.cross_entropy(logits, y)
        self.forward_weights = copy.deepcopy(self.model)
        self.max_norm()
        self.optimizer.zero_grad()
        loss.backward()
        grads = [p.grad.clone() for p in self.model.parameters()]
        self.optimizer.step()
        return grads


model = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 3))
x, y = torch.randn(5, 6), torch.tensor([0, 1, 2, 1, 0])
trainer = Trainer(model)
grads = trainer.train_step(x, y)
reference = trainer.forward_weights  # the weights the forward used

F.cross_entropy(reference(x), y).backward()
if not all(torch.allclose(g, p.grad) for g, p in zip(grads, reference.parameters())):
    print("wrong gradient: backward used the weights max_norm() rescaled after the forward")
else:
    print("gradient ok")
