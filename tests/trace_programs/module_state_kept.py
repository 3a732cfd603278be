# expect-kind: backward-twice
# expect-error: Trying to backward through the graph a second time
# A hand-written batch norm keeps its running mean as a module buffer without detach(): the next step's loss
# reaches the previous step's (freed) graph through it.
import torch
from torch import nn


class RunningNorm(nn.Module):
    def __init__(self, size, momentum=0.9):
        super().__init__()
        self.momentum = momentum
        self.register_buffer("running_mean", torch.zeros(size))

    def forward(self, x):
        self.running_mean = self.momentum * self.running_mean + (1 - self.momentum) * x.mean(0)  # expect: carry
        return x - self.running_mean


torch.manual_seed(0)
layer, norm = nn.Linear(3, 4), RunningNorm(4)
opt = torch.optim.SGD(layer.parameters(), lr=0.1)
for step in range(3):
    out = norm(layer(torch.randn(8, 3)))  # expect: save
    loss = out.pow(2).mean()
    opt.zero_grad()
    loss.backward()  # expect: backward, freed
    opt.step()
