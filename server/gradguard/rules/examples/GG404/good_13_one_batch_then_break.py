import torch
from torch import nn


def smoke_test(model, loader):
    """One optimisation step on the first batch, to check that the pipeline runs before a long job."""
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    reg = model.weight.pow(2).sum()  # built once: only one batch ever back-propagates through it
    for x, y in loader:
        loss = nn.functional.mse_loss(model(x), y) + 1e-3 * reg
        opt.zero_grad()
        loss.backward()
        opt.step()
        break


torch.manual_seed(0)
smoke_test(nn.Linear(3, 1), [(torch.randn(4, 3), torch.randn(4, 1)) for _ in range(3)])
