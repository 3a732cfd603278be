import torch

torch.manual_seed(0)
W = torch.randn(3, 4, requires_grad=True)
rows = W * 2
normed = torch.stack([row / row.norm() for row in rows.unbind(0)])
loss = normed.sum()
loss.backward()
