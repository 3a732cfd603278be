import torch

torch.manual_seed(0)
W = torch.randn(4, 6, requires_grad=True)
x = torch.randn(3, 4)
mask = torch.tensor([[1.0, 0.0, 1.0, 1.0, 0.0, 1.0]])
h = torch.tanh(x @ W)
h.mul_(mask)  # <- GG201
loss = h.sum()
loss.backward()
