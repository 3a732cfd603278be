import torch
from torch import nn

proj = nn.Linear(4, 4)
pos = torch.zeros(4).unsqueeze(0).expand(5, 4)
pos.add_(torch.arange(4.0))  # <- GG108
tokens = torch.randn(5, 4)
loss = proj(tokens + pos).pow(2).mean()
loss.backward()
