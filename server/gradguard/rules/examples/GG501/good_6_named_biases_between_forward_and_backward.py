import torch
from torch import nn

# Only the biases are changed between the forward and backward (`name.endswith("bias")`); nn.Linear never saves
# its bias, so every gradient is the one of the forward's own parameters.
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 3))
x = torch.randn(6, 4)
loss = model(x).pow(2).sum()
for name, param in model.named_parameters():
    if name.endswith("bias"):
        param.data.clamp_(-0.1, 0.1)
loss.backward()

grads = [p.grad.clone() for p in model.parameters()]
model.zero_grad()
torch.manual_seed(0)
reference = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 3))
reference(x).pow(2).sum().backward()
assert all(torch.allclose(g, r.grad) for g, r in zip(grads, reference.parameters()))
