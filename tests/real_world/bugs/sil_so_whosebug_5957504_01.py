import torch

x = torch.tensor(1., requires_grad=True)
y = torch.tensor(0., requires_grad=True)
z = torch.full((2, ), float("nan"))
z[0] = x * y / y
z[1] = x + y
print(z)  # tensor([nan, 1.], grad_fn=<CopySlices>)
z[1].backward()
print(x.grad)  # tensor(nan)

# z[1] = x + y does not depend on z[0]: d z[1] / dx is 1
if not torch.allclose(x.grad, torch.tensor(1.)):
    print("wrong gradient: the nan of z[0] leaks into x.grad through the index assignment")
else:
    print("gradient ok")
