import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class BinOp:
    def __init__(self, model):
        self.target_modules = [m.weight for m in model.modules() if isinstance(m, nn.Conv2d)]
        self.saved_params = [p.data.clone() for p in self.target_modules]

    def binarization(self):
        for index, p in enumerate(self.target_modules):
            self.saved_params[index].copy_(p.data)
            n = p.data[0].nelement()
            alpha = p.data.norm(1, 3, keepdim=True).sum(2, keepdim=True).sum(1, keepdim=True).div(n)
            p.data = p.data.sign().mul(alpha)

    def restore(self):
        for index, p in enumerate(self.target_modules):
            p.data.copy_(self.saved_params[index])

    def updateBinaryGradWeight(self):
        for p in self.target_modules:
            n = p.data[0].nelement()
            m = p.data.norm(1, 3, keepdim=True).sum(2, keepdim=True).sum(1, keepdim=True).div(n).expand(p.size())
            m = m.clone()
            m[p.data.lt(-1.0)] = 0
            m[p.data.gt(1.0)] = 0
            p.grad.data = m.mul(p.grad.data) + p.grad.data.sign().mul(p.data.sign()).div(n)


class XNORTrainer:
    def __init__(self, model):
        self.model = model
        self.optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
        self.bin_op = BinOp(model)

    def train_step(self, data, target):
        self.bin_op.binarization()
        output = self.model(data)
        loss = F.cross_entropy(output, target)
        self.optimizer.zero_grad()
        loss.backward()
        self.bin_op.restore()
        self.bin_op.updateBinaryGradWeight()
        self.optimizer.step()


model = nn.Sequential(nn.Conv2d(1, 4, 3), nn.BatchNorm2d(4), nn.ReLU(), nn.Conv2d(4, 4, 3), nn.ReLU(),
                      nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(4, 2))
trainer = XNORTrainer(model)
for _ in range(2):
    trainer.train_step(torch.randn(3, 1, 8, 8), torch.tensor([0, 1, 1]))
