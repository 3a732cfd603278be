import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Exponential(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        out = torch.exp(x)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, out_grad):
        (out,) = ctx.saved_tensors
        return out_grad * out


class SiLUMulFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return F.silu(a) * b

    @staticmethod
    def backward(ctx, dc):
        a, b = ctx.saved_tensors
        sig_a = torch.sigmoid(a)
        silu_a = a * sig_a
        db = dc * silu_a
        da = dc * (silu_a * (1 - sig_a) + sig_a) * b
        a.copy_(da)
        b.copy_(db)
        return a, b


class ExpGatedMLP(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.gate_proj = nn.Linear(dim, hidden)
        self.up_proj = nn.Linear(dim, hidden)
        self.down_proj = nn.Linear(hidden, dim)

    def forward(self, x):
        gate = Exponential.apply(self.gate_proj(x) * 0.1)
        return self.down_proj(SiLUMulFunction.apply(gate, self.up_proj(x)))


mlp = ExpGatedMLP(8, 16)
opt = torch.optim.AdamW(mlp.parameters(), lr=1e-3)
for _ in range(2):
    x, target = torch.randn(4, 8), torch.randn(4, 8)
    loss = F.mse_loss(mlp(x), target)
    opt.zero_grad()
    loss.backward()
    opt.step()
