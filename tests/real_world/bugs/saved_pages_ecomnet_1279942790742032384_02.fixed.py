import torch

a = torch.tensor([1, 2, 3.], requires_grad=True)
out = a.sigmoid()
c = out.detach().clone()
c.zero_()
print(out)  # out is left intact

out.sum().backward()
print(a.grad)
