import torch

torch.manual_seed(0)
W = torch.randn(4, 3, requires_grad=True)
x = torch.randn(6, 4)
hidden = torch.matmul(x, W)
loss = hidden.relu().sum()
loss.backward()
