import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class SecondOrderPool(nn.Module):
    def __init__(self, channels, eps=1e-4):
        super().__init__()
        self.reduce = nn.Conv2d(3, channels, 1)
        self.eps = eps

    def forward(self, x):
        f = self.reduce(x).flatten(2)
        f = f - f.mean(-1, keepdim=True)
        cov = f @ f.transpose(1, 2) / f.shape[-1]
        L, V = torch.linalg.eigh(cov)
        L = torch.where(L > self.eps, L, torch.full_like(L, self.eps))
        log_cov = V @ torch.diag_embed(L.log()) @ V.transpose(1, 2)
        return log_cov.flatten(1)


model = nn.Sequential(SecondOrderPool(4), nn.Linear(16, 3))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
for _ in range(2):
    x, y = torch.randn(2, 3, 5, 5), torch.tensor([0, 2])
    loss = F.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
