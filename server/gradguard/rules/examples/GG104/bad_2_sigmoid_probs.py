import torch
from torch import nn

torch.manual_seed(0)
clf = nn.Linear(5, 1)
x = torch.randn(8, 5)
y = (x[:, :1] > 0).float()
probs = torch.zeros(8, 1)
for epoch in range(2):
    torch.sigmoid(clf(x), out=probs)  # <- GG104
    loss = nn.functional.binary_cross_entropy(probs, y)
    loss.backward()
