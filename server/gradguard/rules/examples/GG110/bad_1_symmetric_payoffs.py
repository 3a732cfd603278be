import torch
from torch import nn

torch.manual_seed(0)
n_actions = 4
payoff = nn.Linear(16, n_actions * n_actions)
edges = torch.randn(2, 5, 16)  # both directions of 5 edges
out = payoff(edges).view(2, 5, n_actions, n_actions)
# the reverse direction sees the payoff matrix from the other agent's side
out[1] = out[1].transpose(-2, -1)  # <- GG110
out.mean().backward()
