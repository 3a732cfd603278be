import torch
from torch import nn


class Normalize(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        norm = x.norm()
        ctx.save_for_backward(x, norm)
        return x / norm

    @staticmethod
    def backward(ctx, grad):
        x, norm = ctx.saved_tensors
        y = x / norm
        return (grad - y * (grad * y).sum()) / norm


class FeatureBank(torch.autograd.Function):
    """Backward adds the gradient into a bank passed as a plain buffer: updating it is the point."""

    @staticmethod
    def forward(ctx, x, bank):
        ctx.bank = bank
        return x.view_as(x)

    @staticmethod
    def backward(ctx, grad):
        ctx.bank.add_(grad)
        return grad, None


torch.manual_seed(0)
direction = nn.Parameter(torch.randn(4) * 3)
bank = torch.zeros(4)
for target in torch.randn(2, 4):
    (FeatureBank.apply(Normalize.apply(direction), bank) * target).sum().backward()
print(direction.grad, bank)
