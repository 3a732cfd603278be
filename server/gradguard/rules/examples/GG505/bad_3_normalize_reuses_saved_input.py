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
        x.div_(norm)  # <- GG505
        return (grad - x * (grad * x).sum()) / norm


torch.manual_seed(0)
direction = nn.Parameter(torch.randn(4) * 3)
targets = torch.randn(2, 4)
start = direction.detach().clone()
for target in targets:  # gradient accumulation over two micro-batches
    (Normalize.apply(direction) * target).sum().backward()

ref = nn.Parameter(start.clone())
true_grad = sum(torch.autograd.grad((ref / ref.norm() * t).sum(), ref)[0] for t in targets)
if not torch.allclose(direction.grad, true_grad):
    print("wrong gradient:", (direction.grad - true_grad).abs().max().item())
