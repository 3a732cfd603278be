import torch
w = torch.rand(4, requires_grad=True)
w += 1  # <- GG101
loss = w.sum()
loss.backward()
