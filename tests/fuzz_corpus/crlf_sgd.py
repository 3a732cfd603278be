import torch

w = torch.zeros(3, requires_grad=True)
x = torch.randn(16, 3)
for i in range(4):
    loss = (x @ w).pow(2).mean()
    loss.backward()
    w -= 0.01 * w.grad  # GG101 叶子
    w.grad.zero_()
    h = torch.sigmoid(x @ w)
    h.add_(1)
    h.sum().backward()
