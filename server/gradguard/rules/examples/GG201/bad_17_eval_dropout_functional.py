import torch
import torch.nn.functional as F
from torch import nn

torch.manual_seed(0)
fc = nn.Linear(8, 8)
x = torch.randn(4, 8)
h = F.dropout(torch.sigmoid(fc(x)), p=0.1, training=False)
h += 1.0  # <- GG201
h.sum().backward()
