import torch

w = torch.rand(4, requires_grad=True)
with torch.inference_mode():
    phase = torch.linspace(0, 1, 4)
y = torch.sin(w + 0.0) * phase  # <- GG106
y.sum().backward()
