import torch

torch.manual_seed(0)
w = torch.randn(3, 4, requires_grad=True)
target = torch.tanh(w) * 2
target.detach_()
loss = ((w - target) ** 2).sum()
loss.backward()
