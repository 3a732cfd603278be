import torch
from torch import nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 3))
x = torch.randn(6, 4)
loss = model(x).pow(2).sum()
# nn.Linear saves its weight for backward, never its bias: zeroing the biases here changes no gradient
for p in model.parameters():
    if p.dim() == 1:
        p.data.zero_()
model[2].bias.data.fill_(0.0)
loss.backward()

grads = [p.grad.clone() for p in model.parameters()]
model.zero_grad()
torch.manual_seed(0)
reference = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 3))
reference(x).pow(2).sum().backward()
assert all(torch.allclose(g, r.grad) for g, r in zip(grads, reference.parameters()))
