import torch
from torch import nn

torch.manual_seed(0)
clf = nn.Linear(5, 1)
x = torch.randn(8, 5)
y = (x[:, :1] > 0).float()
probs = torch.zeros(8, 1)
for epoch in range(2):
    logits = clf(x)
    loss = nn.functional.binary_cross_entropy_with_logits(logits, y)
    loss.backward()
    with torch.no_grad():
        torch.sigmoid(logits, out=probs)
    print((probs.round() == y).float().mean().item())
