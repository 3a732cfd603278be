import torch

torch.manual_seed(0)
x = torch.ones(3, requires_grad=True)
y = (2 * x * x).sum()
x.data *= 10  # <- GG501
y.backward()

# y = 2 x^2 was evaluated at x = 1: dy/dx = 4
if not torch.allclose(x.grad, torch.full((3,), 4.0)):
    print("wrong gradient:", x.grad.tolist())
