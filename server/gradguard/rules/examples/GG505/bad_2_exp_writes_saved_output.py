import torch
from torch import nn


class Exp(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        result = x.exp()
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad):
        result, = ctx.saved_tensors
        result.mul_(grad)  # <- GG505
        return result


torch.manual_seed(0)
log_scale = nn.Parameter(torch.randn(3))
weights = nn.Parameter(torch.randn(3))
scale = Exp.apply(log_scale)
scale.pow(2).sum().backward()
(weights * scale.detach()).sum().backward()  # the output, read again as a constant

true_grad = log_scale.detach().exp()
if not torch.allclose(weights.grad, true_grad):
    print("wrong gradient:", (weights.grad - true_grad).abs().max().item())
