import torch
from torch import nn

torch.manual_seed(0)
body = nn.Linear(4, 8)
actor = nn.Linear(8, 2)
critic = nn.Linear(8, 1)
actor_opt = torch.optim.Adam([*body.parameters(), *actor.parameters()], lr=1e-3)
critic_opt = torch.optim.Adam(critic.parameters(), lr=1e-3)
states = torch.randn(6, 4)
actions = torch.tensor([0, 1, 1, 0, 1, 0])
returns = torch.randn(6, 1)
h = torch.relu(body(states))
values = critic(h)
advantage = (returns - values).detach()
log_probs = torch.log_softmax(actor(h), dim=1)[torch.arange(6), actions]
actor_loss = -(log_probs * advantage.squeeze(1)).mean()
critic_loss = (returns - values).pow(2).mean()
actor_opt.zero_grad()
critic_opt.zero_grad()
actor_loss.backward(retain_graph=True)
critic_loss.backward()
actor_opt.step()
critic_opt.step()
