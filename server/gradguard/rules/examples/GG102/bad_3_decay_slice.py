import torch

torch.manual_seed(0)
theta = torch.randn(5, requires_grad=True)
x = torch.randn(10, 4)
y = torch.randn(10)
for step in range(3):
    pred = x @ theta[1:] + theta[0]
    loss = ((pred - y) ** 2).mean()
    loss.backward()
    theta[1:].mul_(0.99)  # <- GG102
    theta.grad = None
