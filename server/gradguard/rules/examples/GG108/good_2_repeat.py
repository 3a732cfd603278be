import torch
from torch import nn

proj = nn.Linear(4, 4)
pos = torch.zeros(4).unsqueeze(0).repeat(5, 1)  # repeat copies: rows are independent
pos[:, 0] = 1.0
loss = proj(torch.randn(5, 4) + pos).pow(2).mean()
loss.backward()
