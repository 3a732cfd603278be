import torch
import torch.nn.functional as F

torch.manual_seed(0)
freqs = torch.randn(4, requires_grad=True)
t = torch.linspace(0, 1, 8).unsqueeze(1)
phase = t * freqs
wave = torch.sin(phase)
F.leaky_relu(phase, 0.1, inplace=True)  # <- GG202
loss = (wave + phase).pow(2).mean()
loss.backward()
