import torch
import torch.nn as nn

torch.manual_seed(0)


class Leaky(nn.Module):
    def __init__(self, beta=0.9, threshold=1.0):
        super().__init__()
        self.beta, self.threshold = beta, threshold

    @staticmethod
    def zeros(*args):
        for state in args:
            state.detach().zero_()

    def init_leaky(self, shape):
        return torch.ones(shape, requires_grad=True)

    def forward(self, input_, mem):
        reset = (mem - self.threshold > 0).float().detach()
        mem = self.beta * mem + input_ - reset * self.threshold
        return torch.sigmoid(5 * (mem - self.threshold)), mem


class SNNTrainer:
    def __init__(self):
        self.fc = nn.Linear(4, 3)
        self.lif = Leaky()
        self.opt = torch.optim.Adam(self.fc.parameters(), lr=1e-2)

    def epoch(self, steps=4):
        mem = self.lif.init_leaky((2, 3))
        self.lif.zeros(mem)
        spikes = []
        for t in range(steps):
            spk, mem = self.lif(self.fc(torch.rand(2, 4)), mem)
            spikes.append(spk)
        loss = (torch.stack(spikes).mean(0) - 0.5).pow(2).sum()
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()


trainer = SNNTrainer()
for _ in range(2):
    trainer.epoch()
