import torch
from torch import nn

torch.manual_seed(0)
enc_a, enc_b = nn.Linear(3, 4), nn.Linear(2, 4)
a, b = torch.randn(5, 3), torch.randn(5, 2)
features = torch.cat([enc_a(a), enc_b(b)], dim=1)
loss = features.tanh().mean()
loss.backward()
