import torch

x = torch.ones(1, requires_grad=True)
x.data *= 100  # change the value before the forward pass uses it
y = x ** 2

y.backward()
print(x)
print(x.grad)

# y = x^2 evaluated at x = 100, so dy/dx = 2 x = 200
expected = torch.tensor([200.])
if not torch.allclose(x.grad, expected):
    print(f"wrong gradient: x.grad = {x.grad.tolist()}, expected {expected.tolist()}")
