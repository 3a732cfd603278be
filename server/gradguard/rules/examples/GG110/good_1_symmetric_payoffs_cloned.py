import torch
from torch import nn

torch.manual_seed(0)
n_actions = 4
payoff = nn.Linear(16, n_actions * n_actions)
edges = torch.randn(2, 5, 16)
out = payoff(edges).view(2, 5, n_actions, n_actions)
out[1] = out[1].transpose(-2, -1).clone()  # the transposed values in memory of their own
out.mean().backward()
