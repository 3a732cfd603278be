import torch
from torch import nn

torch.manual_seed(0)
critic = nn.Linear(3, 1)
opt = torch.optim.Adam(critic.parameters(), lr=1e-3)
x = torch.randn(6, 3, requires_grad=True)
score = critic(x).mean()
opt.zero_grad()
score.backward(retain_graph=True)
opt.step()  # <- GG401
penalty = torch.autograd.grad(score, x)[0].pow(2).sum()
print(penalty.item())
