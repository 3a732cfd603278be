import torch
from torch import nn

torch.manual_seed(0)
fc = nn.Linear(8, 8)
act = nn.ReLU()
drop = nn.Dropout(p=0.0)  # a config's dropout=0: torch returns the ReLU's output itself
x = torch.randn(4, 8)
h = drop(act(fc(x)))
h += 1.0  # <- GG201
h.sum().backward()
