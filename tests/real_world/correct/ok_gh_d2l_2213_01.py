import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class MyBatchNorm1d(nn.Module):
    def __init__(self, num_features, momentum=0.1, eps=1e-5):
        super().__init__()
        self.gamma = nn.Parameter(torch.ones(num_features))
        self.beta = nn.Parameter(torch.zeros(num_features))
        self.register_buffer("running_mean", torch.zeros(num_features))
        self.register_buffer("running_var", torch.ones(num_features))
        self.momentum, self.eps = momentum, eps

    def forward(self, x):
        if self.training:
            mean = x.mean(0)
            var = x.var(0, unbiased=False)
            with torch.no_grad():
                self.running_mean.mul_(1 - self.momentum).add_(mean, alpha=self.momentum)
                self.running_var.mul_(1 - self.momentum).add_(var, alpha=self.momentum)
        else:
            mean, var = self.running_mean, self.running_var
        return self.gamma * (x - mean) / torch.sqrt(var + self.eps) + self.beta


net = nn.Sequential(nn.Linear(5, 8), MyBatchNorm1d(8), nn.ReLU(), nn.Linear(8, 2))
opt = torch.optim.SGD(net.parameters(), lr=0.1)
for _ in range(3):
    loss = F.cross_entropy(net(torch.randn(6, 5)), torch.randint(0, 2, (6,)))
    opt.zero_grad()
    loss.backward()
    opt.step()
net.eval()
with torch.no_grad():
    net(torch.randn(2, 5))
