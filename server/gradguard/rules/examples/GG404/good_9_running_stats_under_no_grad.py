# Running statistics updated in place under no_grad: the in-place add records no graph, so the buffers never
# hold the batch's graph across iterations (as nn.BatchNorm keeps them).
import torch
from torch import nn


class RunningNorm(nn.Module):
    def __init__(self, dim, momentum=0.1):
        super().__init__()
        self.momentum = momentum
        self.register_buffer("running_mean", torch.zeros(dim))
        self.register_buffer("running_var", torch.ones(dim))

    def forward(self, x):
        if self.training:
            mean = x.mean(0)
            var = x.var(0, unbiased=False)
            with torch.no_grad():
                self.running_mean.mul_(1 - self.momentum).add_(mean, alpha=self.momentum)
                self.running_var.mul_(1 - self.momentum).add_(var, alpha=self.momentum)
        else:
            mean, var = self.running_mean, self.running_var
        return (x - mean) / (var + 1e-5).sqrt()


torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 8), RunningNorm(8), nn.Linear(8, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(3):
    x = torch.randn(16, 4)
    loss = model(x).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
