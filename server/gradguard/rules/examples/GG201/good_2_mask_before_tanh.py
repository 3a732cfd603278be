import torch

torch.manual_seed(0)
W = torch.randn(4, 6, requires_grad=True)
x = torch.randn(3, 4)
mask = torch.tensor([[1.0, 0.0, 1.0, 1.0, 0.0, 1.0]])
pre = x @ W
pre.mul_(mask)
h = torch.tanh(pre)
loss = h.sum()
loss.backward()
