import torch
from torch import nn

torch.manual_seed(0)
n_actions = 4
payoff = nn.Linear(16, n_actions * n_actions)
out = payoff(torch.randn(2, 5, 16)).view(2, 5, n_actions, n_actions)
out = torch.stack([out[0], out[1].transpose(-2, -1)])
out.mean().backward()
