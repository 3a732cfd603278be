import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Categorical

torch.manual_seed(0)


class PPOLearner:
    def __init__(self, obs_dim, state_dim, n_actions, mini_epochs=4, eps_clip=0.2):
        self.mac = nn.Sequential(nn.Linear(obs_dim, 32), nn.ReLU(), nn.Linear(32, n_actions))
        self.critic = nn.Sequential(nn.Linear(state_dim, 32), nn.ReLU(), nn.Linear(32, 1))
        self.optimiser = torch.optim.Adam(list(self.mac.parameters()) + list(self.critic.parameters()), lr=5e-4)
        self.mini_epochs, self.eps_clip = mini_epochs, eps_clip

    def train(self, batch):
        obs, states, actions = batch["obs"], batch["state"], batch["actions"]
        returns, old_log_pi = batch["returns"], batch["log_pi"]
        old_values = self.critic(states).squeeze(-1)
        advantages = returns - old_values
        for _ in range(self.mini_epochs):
            dist = Categorical(logits=self.mac(obs))
            log_pi_taken = dist.log_prob(actions)
            ratios = torch.exp(log_pi_taken - old_log_pi)
            surr1 = ratios * advantages.unsqueeze(-1)
            surr2 = torch.clamp(ratios, 1 - self.eps_clip, 1 + self.eps_clip) * advantages.unsqueeze(-1)
            actor_loss = -torch.min(surr1, surr2).mean() - 0.01 * dist.entropy().mean()
            critic_loss = F.mse_loss(self.critic(states).squeeze(-1), returns)
            loss = actor_loss + 0.5 * critic_loss
            self.optimiser.zero_grad()
            loss.backward()
            self.optimiser.step()


learner = PPOLearner(obs_dim=5, state_dim=9, n_actions=3)
T, n_agents = 8, 2
with torch.no_grad():
    obs = torch.randn(T, n_agents, 5)
    dist = Categorical(logits=learner.mac(obs))
    actions = dist.sample()
    batch = {"obs": obs, "state": torch.randn(T, 9), "actions": actions, "log_pi": dist.log_prob(actions),
             "returns": torch.randn(T)}
learner.train(batch)
