import torch

a = torch.tensor([1, 2, 3.], requires_grad=True)
out = a.sigmoid()
c = out.detach().clone()
c.zero_()
print(out)  # out is left intact

out.sum().backward()
print(a.grad)

s = torch.tensor([1, 2, 3.]).sigmoid()
true_grad = s * (1 - s)
if not torch.allclose(a.grad, true_grad):
    print("wrong gradient: sigmoid backward used the output zeroed through .data")
else:
    print("gradient ok")
