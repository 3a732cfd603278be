import torch
from torch import nn


class NormalizeInplace(torch.autograd.Function):
    """Scales each row to unit norm in the input's own memory."""

    @staticmethod
    def forward(ctx, x):
        norm = x.norm(dim=1, keepdim=True)
        x.div_(norm)  # <- GG504
        ctx.save_for_backward(x, norm)
        return x

    @staticmethod
    def backward(ctx, grad):
        y, norm = ctx.saved_tensors
        return (grad - y * (grad * y).sum(dim=1, keepdim=True)) / norm


torch.manual_seed(0)
encoder = nn.Linear(4, 3)
inputs = torch.randn(5, 4)
z = encoder(inputs)
unit = NormalizeInplace.apply(z)
loss = (unit @ unit.t()).sum() + z.pow(2).sum()  # z was normalised in place
loss.backward()

u = nn.functional.normalize(encoder(inputs), dim=1)
true_grad, = torch.autograd.grad((u @ u.t()).sum() + u.pow(2).sum(), encoder.weight)
if not torch.allclose(encoder.weight.grad, true_grad, atol=1e-5):
    print("wrong gradient:", (encoder.weight.grad - true_grad).abs().max().item())
