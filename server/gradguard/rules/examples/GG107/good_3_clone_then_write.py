import torch

w = torch.rand(4, requires_grad=True)
with torch.inference_mode():
    weights = torch.ones(4)
weights = weights.clone()
weights[0] = 0.0
loss = (w * 3).sum()
loss.backward()
