import torch

torch.manual_seed(0)
c = torch.randn(10, 3, 2, 32, requires_grad=True)
print(c.is_leaf)
torch.add(c, 1, out=c)
print(c.is_leaf)
