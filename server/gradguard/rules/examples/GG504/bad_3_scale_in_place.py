import torch
from torch import nn


class ScaleInplace(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, scale):
        ctx.scale = scale
        x *= scale  # <- GG504
        return x

    @staticmethod
    def backward(ctx, grad):
        return grad * ctx.scale, None


torch.manual_seed(0)
layer = nn.Linear(3, 3)
inputs = torch.randn(4, 3)
h = layer(inputs)
scaled = ScaleInplace.apply(h, 3.0)
loss = (scaled + h).pow(2).sum()
loss.backward()

s = layer(inputs) * 3.0
true_grad, = torch.autograd.grad((s + s).pow(2).sum(), layer.weight)
if not torch.allclose(layer.weight.grad, true_grad):
    print("wrong gradient:", (layer.weight.grad - true_grad).abs().max().item())
