import torch
import torch.nn.functional as F
from torch import nn

torch.manual_seed(0)
enc = nn.Linear(5, 6)
dec = nn.Linear(6, 5)
x = torch.randn(4, 5)
h = torch.tanh(enc(x))
h = F.relu(h, inplace=True)  # <- GG202
loss = F.mse_loss(dec(h), x)
loss.backward()
