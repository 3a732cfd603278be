import torch

torch.manual_seed(0)
w = torch.randn(6, requires_grad=True)
shifted = w.clone()
shifted += 1.0
shifted.clamp_(min=0)
loss = (shifted * w).sum()
loss.backward()
print(w.grad)
