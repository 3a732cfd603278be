import torch

torch.manual_seed(0)
W = torch.randn(4, 3, requires_grad=True)
x = torch.randn(6, 4)
hidden = torch.empty(6, 3)
torch.matmul(x, W, out=hidden)  # <- GG104
loss = hidden.relu().sum()
loss.backward()
