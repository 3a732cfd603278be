import torch
from torch import nn

torch.manual_seed(0)
head = nn.Linear(4, 3)
x = torch.randn(5, 4)
target = torch.tensor([0, 2, 1, 1, 0])
scores = torch.exp(head(x))
scores /= scores.sum(dim=1, keepdim=True)  # <- GG201
loss = -scores[torch.arange(5), target].log().mean()
loss.backward()
