import torch

x = torch.tensor(1., requires_grad=True)
y = torch.tensor(0., requires_grad=True)
z0 = x * y / y
z1 = x + y
print(z0, z1)  # tensor(nan, grad_fn=<DivBackward0>) tensor(1., grad_fn=<AddBackward0>)
z1.backward()
print(x.grad)  # tensor(1.)

# z[1] = x + y does not depend on z[0]: d z[1] / dx is 1
if not torch.allclose(x.grad, torch.tensor(1.)):
    print("wrong gradient: the nan of z[0] leaks into x.grad through the index assignment")
else:
    print("gradient ok")
