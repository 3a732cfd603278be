import torch

w = torch.rand(3, 4, requires_grad=True)
mask = torch.ones(1, 4).expand(3, 4)
mask.fill_(0.5)  # torch accepts scalar fills on expanded tensors (every element gets the same value)
loss = (w * mask).sum()
loss.backward()
