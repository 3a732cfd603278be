import torch

scores = torch.randn(3, 3, requires_grad=True)
mask = torch.ones(1, 3).expand(3, -1)
with torch.no_grad():
    mask.mul_(0.5)  # <- GG108
loss = (scores * mask).sum()
loss.backward()
