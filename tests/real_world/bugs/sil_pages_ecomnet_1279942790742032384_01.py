import torch

a = torch.tensor([1, 2, 3.], requires_grad=True)
out = a.sigmoid()
c = out.data
c.zero_()
print(out)  # out was modified by c.zero_()

out.sum().backward()
print(a.grad)  # The result is very, very wrong because `out` changed!

s = torch.tensor([1, 2, 3.]).sigmoid()
true_grad = s * (1 - s)
if not torch.allclose(a.grad, true_grad):
    print("wrong gradient: sigmoid backward used the output zeroed through .data")
else:
    print("gradient ok")
