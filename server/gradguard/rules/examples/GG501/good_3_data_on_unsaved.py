import torch
from torch import nn

torch.manual_seed(0)
model = nn.Linear(4, 3)
x = torch.randn(6, 4)
target = torch.tensor([0, 1, 2, 0, 1, 2])
logits = model(x)
logits.data.sub_(logits.data.max(dim=1, keepdim=True).values)
loss = nn.functional.cross_entropy(logits, target)
loss.backward()
print(model.weight.grad.norm())
