import torch

a = torch.tensor([1, 2, 3.], requires_grad=True)
out = a.sigmoid()
c = out.detach()
c.zero_()
print(out)  # modified by c.zero_() !!

out.sum().backward()  # Requires the original value of out, but that was overwritten by c.zero_()
print(a.grad)
