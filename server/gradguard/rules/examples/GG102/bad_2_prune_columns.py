import torch

torch.manual_seed(0)
W = torch.randn(4, 6, requires_grad=True)
b = torch.zeros(4, requires_grad=True)
x = torch.randn(8, 6)
y = torch.randn(8, 4)
W[:, 4:] = 0.0  # <- GG102
for _ in range(3):
    loss = ((x @ W.t() + b - y) ** 2).mean()
    loss.backward()
