import torch

torch.manual_seed(0)
W = torch.randn(3, 3, requires_grad=True)
xs = torch.randn(4, 1, 3)
h = torch.zeros(1, 3)
total = 0.0
for t in range(4):
    h = torch.tanh(h @ W + xs[t])
    total = total + h.pow(2).sum()
total.backward()
print(W.grad.norm())
