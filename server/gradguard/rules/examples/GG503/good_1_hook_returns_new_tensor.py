import torch
from torch import nn


class ScaledResidual(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.branch = nn.Linear(dim, dim)

    def forward(self, x):
        h = self.branch(x)
        if h.requires_grad:
            h.register_hook(lambda g: g * 0.5)  # a new tensor replaces the gradient; the identity path keeps its own
        return x + h


torch.manual_seed(0)
stem = nn.Linear(4, 4)
block = ScaledResidual(4)
block(stem(torch.randn(3, 4))).pow(2).mean().backward()
print(stem.weight.grad.norm())
