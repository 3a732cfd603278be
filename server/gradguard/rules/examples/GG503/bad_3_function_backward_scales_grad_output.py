import torch
from torch import nn


class ScaleGradient(torch.autograd.Function):
    """Identity forward; backward scales the gradient (down-weights a branch's updates)."""

    @staticmethod
    def forward(ctx, x, scale):
        ctx.scale = scale
        return x.view_as(x)

    @staticmethod
    def backward(ctx, grad_output):
        grad_output.mul_(ctx.scale)  # <- GG503
        return grad_output, None


class Block(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.branch = nn.Linear(dim, dim)

    def forward(self, x):
        return x + ScaleGradient.apply(self.branch(x), 0.1)


torch.manual_seed(0)
stem = nn.Linear(4, 4)
block = Block(4)
inputs = torch.randn(5, 4)
block(stem(inputs)).pow(2).sum().backward()

# reference: the branch's gradient scaled by 0.1 through a hook returning a new tensor
stem_out = stem(inputs)
branch_out = block.branch(stem_out)
branch_out.register_hook(lambda g: g * 0.1)
true_grad, = torch.autograd.grad((stem_out + branch_out).pow(2).sum(), stem.weight)
if not torch.allclose(stem.weight.grad, true_grad):
    print("wrong gradient:", (stem.weight.grad - true_grad).abs().max().item())
