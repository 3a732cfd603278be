import torch

w = torch.rand(3, 4, requires_grad=True)
shift = torch.zeros(3, 4).expand(3, 4)  # nothing is broadcast: every element has its own memory
shift += 0.5
loss = (w + shift).sum()
loss.backward()
