import torch
import torch.nn as nn

torch.manual_seed(0)


class ScaledResidual(nn.Module):
    def __init__(self, channels, alpha=0.1):
        super().__init__()
        self.b2 = nn.Sequential(nn.Linear(channels, channels), nn.ReLU())
        self.alpha = alpha

    def forward(self, x):
        self.branch_out = self.b2(x)
        if self.branch_out.requires_grad:
            self.branch_out.register_hook(lambda grad: grad * self.alpha)
        return x + self.branch_out


def input_gradient(block, x, target):
    x = x.clone().requires_grad_()
    out = block(x * 1.0)
    ((out - target) ** 2).sum().backward()
    return x.grad


block = ScaledResidual(4)
x, target = torch.randn(3, 4), torch.randn(3, 4)
grad = input_gradient(block, x, target)

# the gradient the block means: only the branch is scaled, the identity path keeps its gradient
xr = x.clone().requires_grad_()
xr_in = xr * 1.0
branch = block.b2(xr_in)
branch.register_hook(lambda g: g * block.alpha)
((xr_in + branch - target) ** 2).sum().backward()
if not torch.allclose(grad, xr.grad):
    print("wrong gradient: the in-place hook also scaled the gradient of the skip connection")
else:
    print("gradient ok")
