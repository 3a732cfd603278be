import torch
from torch import nn


def fit(encoder, head, x, targets, lr=0.1):
    opt = torch.optim.SGD([*encoder.parameters(), *head.parameters()], lr=lr)
    z = torch.sigmoid(encoder(x))
    for y in targets:
        loss = ((head(z) - y) ** 2).mean()
        opt.zero_grad()
        loss.backward()  # <- GG404
        opt.step()


torch.manual_seed(0)
fit(nn.Linear(4, 6), nn.Linear(6, 1), torch.randn(5, 4), [torch.randn(5, 1) for _ in range(3)])
