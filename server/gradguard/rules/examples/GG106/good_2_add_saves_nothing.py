import torch

w = torch.rand(3, requires_grad=True)
with torch.inference_mode():
    offset = torch.ones(3)
loss = (w + offset).sum()  # addition saves neither operand
loss.backward()
