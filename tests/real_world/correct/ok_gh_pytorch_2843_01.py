import torch
import torch.nn as nn

torch.manual_seed(0)


class ScaledResidual(nn.Module):
    def __init__(self, channels, alpha=0.1):
        super().__init__()
        self.b2 = nn.Sequential(nn.Linear(channels, channels), nn.ReLU())
        self.alpha = alpha

    def forward(self, x):
        branch_out = self.b2(x)
        if branch_out.requires_grad:
            branch_out.register_hook(lambda grad: grad * self.alpha)
        return x + branch_out


block = ScaledResidual(4)
opt = torch.optim.SGD(block.parameters(), lr=0.1)
x, target = torch.randn(3, 4), torch.randn(3, 4)
xg = x.clone().requires_grad_()
loss = ((block(xg * 1.0) - target) ** 2).sum()
opt.zero_grad()
loss.backward()
xr = x.clone().requires_grad_()
branch = block.b2(xr)
g_out = 2 * (xr + branch - target).detach()
g_branch, = torch.autograd.grad(branch, xr, g_out)
expected = g_out + block.alpha * g_branch
if not torch.allclose(xg.grad, expected, atol=1e-6):
    print("wrong gradient: the hook changed the skip connection's gradient")
opt.step()
