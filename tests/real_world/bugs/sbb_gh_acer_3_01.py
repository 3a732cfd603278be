import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Categorical

torch.manual_seed(0)


class ActorCritic(nn.Module):
    def __init__(self, obs_dim, n_actions):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(obs_dim, 32), nn.ReLU(), nn.Linear(32, 32), nn.ReLU())
        self.pi = nn.Linear(32, n_actions)
        self.v = nn.Linear(32, 1)

    def forward(self, x):
        h = self.body(x)
        return self.pi(h), self.v(h).squeeze(-1)


def update(model, actor_optimizer, critic_optimizer, states, actions, returns):
    logits, values = model(states)
    dist = Categorical(logits=logits)
    critic_loss = F.smooth_l1_loss(values, returns)
    estimate = torch.min(returns, values.detach())
    actor_loss = -(dist.log_prob(actions) * estimate).mean()
    critic_optimizer.zero_grad()
    critic_loss.backward(retain_graph=True)
    critic_optimizer.step()
    actor_optimizer.zero_grad()
    actor_loss.backward()
    actor_optimizer.step()


model = ActorCritic(4, 2)
actor_optimizer = torch.optim.Adam(model.pi.parameters(), lr=1e-3)
critic_optimizer = torch.optim.Adam(list(model.body.parameters()) + list(model.v.parameters()), lr=1e-3)
for _ in range(2):
    update(model, actor_optimizer, critic_optimizer, torch.randn(8, 4), torch.randint(0, 2, (8,)), torch.randn(8))
