import torch
from torch import nn

torch.manual_seed(0)
model = nn.Linear(3, 4)
x = torch.randn(6, 3)
targets = torch.randint(0, 4, (6,))
targets[targets == 3] = -100
logits = model(x)
loss = nn.functional.cross_entropy(logits, targets, ignore_index=-100)
loss.backward()
