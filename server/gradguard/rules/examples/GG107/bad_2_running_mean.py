import torch
from torch import nn

model = nn.Linear(3, 1)
with torch.inference_mode():
    running = model(torch.randn(8, 3)).mean(0)
for step in range(3):
    out = model(torch.randn(8, 3))
    with torch.no_grad():
        running.mul_(0.9).add_(0.1 * out.mean(0))  # <- GG107
    out.pow(2).mean().backward()
