import torch

torch.manual_seed(0)
W = torch.randn(3, 3, requires_grad=True)
x = torch.randn(4, 3)
h = x @ W
h[:, 0] = 0.0
loss = h.pow(2).sum()
loss.backward()
