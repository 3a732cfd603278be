import torch

w = torch.rand(3, requires_grad=True)
with torch.inference_mode():
    scale = torch.rand(3)
    scale.add_(1e-3)
loss = (w * 2).sum()
loss.backward()
