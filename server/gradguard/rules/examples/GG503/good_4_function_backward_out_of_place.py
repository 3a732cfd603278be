import torch
from torch import nn


class ScaleGradient(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, scale):
        ctx.scale = scale
        return x.view_as(x)

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output * ctx.scale, None


class Accumulate(torch.autograd.Function):
    """Backward writes only a buffer of its own, never the gradient it received."""

    @staticmethod
    def forward(ctx, x, bank):
        ctx.bank = bank
        return x.view_as(x)

    @staticmethod
    def backward(ctx, grad_output):
        ctx.bank.add_(grad_output.sum(0))
        return grad_output, None


torch.manual_seed(0)
stem = nn.Linear(4, 4)
branch = nn.Linear(4, 4)
bank = torch.zeros(4)
x = stem(torch.randn(5, 4))
out = x + ScaleGradient.apply(branch(x), 0.1) + Accumulate.apply(x, bank)
out.pow(2).sum().backward()
print(stem.weight.grad.norm().item(), bank)
