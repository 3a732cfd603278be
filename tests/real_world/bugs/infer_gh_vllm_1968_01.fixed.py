import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class PrototypeHead(nn.Module):
    def __init__(self, n_classes=3, dim=8, momentum=0.9):
        super().__init__()
        self.n_classes, self.dim, self.momentum = n_classes, dim, momentum
        self.prototypes = None

    def ensure(self):
        if self.prototypes is None:
            self.prototypes = torch.zeros(self.n_classes, self.dim)

    def logits(self, feats):
        self.ensure()
        return F.normalize(feats, dim=1) @ F.normalize(self.prototypes + 1e-6, dim=1).T.clone()

    def update(self, feats, labels):
        self.ensure()
        self.prototypes[labels] = self.momentum * self.prototypes[labels] + (1 - self.momentum) * feats


class Trainer:
    def __init__(self):
        self.encoder = nn.Sequential(nn.Linear(5, 16), nn.ReLU(), nn.Linear(16, 8))
        self.head = PrototypeHead()
        self.opt = torch.optim.SGD(self.encoder.parameters(), lr=0.1)

    @torch.no_grad()
    def validate(self, x, y):
        return (self.head.logits(self.encoder(x)).argmax(1) == y).float().mean().item()

    def train_step(self, x, y):
        feats = self.encoder(x)
        loss = F.cross_entropy(10 * self.head.logits(feats), y)
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        with torch.no_grad():
            self.head.update(feats.detach(), y)


trainer = Trainer()
x, y = torch.randn(6, 5), torch.tensor([0, 1, 2, 0, 1, 2])
trainer.validate(x, y)
for _ in range(2):
    trainer.train_step(x, y)
