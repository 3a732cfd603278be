import torch


class TimesThreeInplace(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        x.mul_(3)
        ctx.mark_dirty(x)
        return x

    @staticmethod
    def backward(ctx, grad):
        return grad * 3


def fn(w, x):
    y = x @ w
    y = TimesThreeInplace.apply(y)
    return y.sum()


w = torch.eye(2, requires_grad=True)
opt = torch.optim.SGD([w], lr=0.1)
for _ in range(2):
    loss = fn(w, torch.ones(2, 2))
    opt.zero_grad()
    loss.backward()
    opt.step()
