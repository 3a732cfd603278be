import torch
from torch import nn

torch.manual_seed(0)
fc = nn.Linear(8, 8)
act = nn.ReLU()
drop = nn.Dropout(p=0.1)  # p > 0 in training: a new tensor, the ReLU's saved output is untouched
x = torch.randn(4, 8)
h = drop(act(fc(x)))
h += 1.0
h.sum().backward()
