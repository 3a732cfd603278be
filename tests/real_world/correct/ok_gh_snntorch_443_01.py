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
        spk = torch.sigmoid(5 * (mem - self.threshold))
        return spk, mem


fc = nn.Linear(4, 3)
lif = Leaky()
opt = torch.optim.Adam(fc.parameters(), lr=1e-2)
for epoch in range(2):
    mem = lif.init_leaky((2, 3))
    lif.zeros(mem)
    spikes = []
    for t in range(4):
        spk, mem = lif(fc(torch.rand(2, 4)), mem)
        spikes.append(spk)
    loss = (torch.stack(spikes).mean(0) - 0.5).pow(2).sum()
    opt.zero_grad()
    loss.backward()
    opt.step()
