import torch

x = torch.ones(1, requires_grad=True)
y = x ** 2
x.data *= 100  # 只改变了值，不会记录在计算图，所以不会影响梯度传播

y.backward()
print(x)
print(x.grad)

# y = x^2 was evaluated at x = 1, so dy/dx = 2 x = 2
expected = torch.tensor([2.])
if not torch.allclose(x.grad, expected):
    print(f"wrong gradient: x.grad = {x.grad.tolist()}, expected {expected.tolist()}")
