import torch

torch.manual_seed(0)
a = torch.tensor([1, 2, 3.], requires_grad=True)
b = a.sigmoid()
print(b)
b = b.clone()
b[1] = 2
b.sum().backward()
print(a.grad)
