import torch
from torch import nn

torch.manual_seed(0)
rnn = nn.GRU(4, 8, batch_first=True)
head = nn.Linear(8, 1)
x = torch.randn(2, 5, 4)
out, _ = rnn(x)
h = out[:, -1]
h = h.detach()
loss = head(h).pow(2).mean()
loss.backward()
