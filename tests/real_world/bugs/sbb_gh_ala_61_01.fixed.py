import torch
import torch.nn as nn
from torch.distributions import Categorical

torch.manual_seed(0)


class A2C:
    def __init__(self, obs_dim, n_actions):
        self.features = nn.Sequential(nn.Linear(obs_dim, 32), nn.ReLU(), nn.Linear(32, 32), nn.ReLU())
        self.v = nn.Linear(32, 1)
        self.policy = nn.Linear(32, n_actions)
        self.critic_opt = torch.optim.RMSprop(list(self.features.parameters()) + list(self.v.parameters()), lr=7e-4)
        self.actor_opt = torch.optim.RMSprop(self.policy.parameters(), lr=7e-4)

    def train(self, states, actions, returns):
        features = self.features(states)
        values = self.v(features).squeeze(-1)
        dist = Categorical(logits=self.policy(features))
        advantages = returns - values.detach()
        value_loss = (returns - values).pow(2).mean()
        policy_loss = -(dist.log_prob(actions) * advantages).mean() - 0.01 * dist.entropy().mean()
        self.critic_opt.zero_grad()
        self.actor_opt.zero_grad()
        (value_loss + policy_loss).backward()
        self.critic_opt.step()
        self.actor_opt.step()


agent = A2C(obs_dim=6, n_actions=3)
for _ in range(2):
    agent.train(torch.randn(8, 6), torch.randint(0, 3, (8,)), torch.randn(8))
