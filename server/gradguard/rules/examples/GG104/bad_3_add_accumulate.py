import torch

torch.manual_seed(0)
w = torch.randn(3, requires_grad=True)
xs = torch.randn(4, 3)
acc = torch.zeros(3)
for x in xs:
    torch.add(acc, x * w, out=acc)  # <- GG104
loss = acc.pow(2).sum()
loss.backward()
