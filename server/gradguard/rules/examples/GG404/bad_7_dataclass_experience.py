from dataclasses import dataclass, field

import torch
from torch import nn

torch.manual_seed(0)


@dataclass
class Experience:
    states: torch.Tensor
    old_log_probs: torch.Tensor
    advantages: torch.Tensor
    epochs: int = 2
    notes: list = field(default_factory=list)


policy = nn.Sequential(nn.Linear(4, 16), nn.Tanh(), nn.Linear(16, 3), nn.LogSoftmax(dim=-1))
opt = torch.optim.Adam(policy.parameters(), lr=1e-3)
states = torch.randn(8, 4)
actions = torch.randint(0, 3, (8, 1))
exp = Experience(states, policy(states).gather(1, actions), torch.randn(8, 1))
for epoch in range(exp.epochs):
    ratio = (policy(exp.states).gather(1, actions) - exp.old_log_probs).exp()
    loss = -(ratio * exp.advantages).mean()
    opt.zero_grad()
    loss.backward()  # <- GG404
    opt.step()
