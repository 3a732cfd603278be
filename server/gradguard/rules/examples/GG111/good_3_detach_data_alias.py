import torch

torch.manual_seed(0)
w = torch.randn(3, 4, requires_grad=True)
y = w * 3
snapshot = y.data
snapshot.detach_()
loss = (y * snapshot).sum()
loss.backward()
