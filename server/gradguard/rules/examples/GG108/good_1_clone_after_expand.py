import torch

w = torch.rand(4, requires_grad=True)
bias = torch.zeros(1, 4).expand(3, 4).clone()
bias += 0.1
loss = (bias * w).sum()
loss.backward()
