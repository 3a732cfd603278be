import torch
from torch import nn


class ScaledResidual(nn.Module):
    """A residual block whose branch gradient is halved by a hook (gradient scaling for a deep stack)."""

    def __init__(self, dim):
        super().__init__()
        self.branch = nn.Linear(dim, dim)

    def forward(self, x):
        h = self.branch(x)
        if h.requires_grad:
            h.register_hook(lambda g: g.mul_(0.5))  # <- GG503
        return x + h


torch.manual_seed(0)
stem = nn.Linear(4, 4)
block = ScaledResidual(4)
inputs = torch.randn(3, 4)
block(stem(inputs)).pow(2).mean().backward()

# the same model with the branch's gradient halved and the identity path left alone
stem_out = stem(inputs)
branch_out = block.branch(stem_out)
branch_out.register_hook(lambda g: g * 0.5)
true_grad, = torch.autograd.grad((stem_out + branch_out).pow(2).mean(), stem.weight)
if not torch.allclose(stem.weight.grad, true_grad):
    print("wrong gradient:", (stem.weight.grad - true_grad).abs().max().item())
