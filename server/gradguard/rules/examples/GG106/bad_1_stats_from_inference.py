import torch
from torch import nn

model = nn.Linear(3, 3)
with torch.inference_mode():
    stats = torch.randn(3)
loss = (model(torch.randn(2, 3)) * stats).sum()  # <- GG106
loss.backward()
