import torch
import torch.nn.functional as F

# not in place
x = torch.tensor([-1.0]).requires_grad_().clone()
print(torch.autograd.grad(F.relu(x), (x, ))[0])
# tensor([0.])
expected = torch.autograd.grad(F.relu(x), (x, ))[0]

# inplace
x = torch.tensor([-1.0]).requires_grad_().clone()
got = torch.autograd.grad(F.relu_(x), (x, ))[0]
print(got)
# tensor([1.])

if not torch.allclose(got, expected):
    print("wrong gradient: relu_ rebinds x to its own output, so d relu_(x)/dx comes out as 1 instead of 0")
else:
    print("gradient ok")
