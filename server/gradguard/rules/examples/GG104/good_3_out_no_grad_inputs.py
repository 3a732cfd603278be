import torch

torch.manual_seed(0)
w = torch.randn(3, requires_grad=True)
xs = torch.randn(4, 3)
total = torch.zeros(3)
for x in xs:
    torch.add(total, x, out=total)
loss = (total * w).sum()
loss.backward()
