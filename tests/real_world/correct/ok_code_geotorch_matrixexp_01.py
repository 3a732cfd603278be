import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class ScaledOrthogonal(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.A = nn.Parameter(torch.randn(n, n) * 0.1)
        self.log_gain = nn.Parameter(torch.zeros(()))

    def weight(self):
        Q = torch.linalg.matrix_exp(self.A - self.A.T)
        Q.mul_(self.log_gain.exp())
        return Q

    def forward(self, x):
        return x @ self.weight().T


layer = ScaledOrthogonal(4)
head = nn.Linear(4, 2)
opt = torch.optim.Adam(list(layer.parameters()) + list(head.parameters()), lr=1e-2)
for _ in range(3):
    loss = F.cross_entropy(head(torch.tanh(layer(torch.randn(6, 4)))), torch.randint(0, 2, (6,)))
    opt.zero_grad()
    loss.backward()
    opt.step()
