import torch
import torch.nn as nn
from torch.distributions import Categorical

from ppo.buffer import RolloutBuffer


class PPO:
    def __init__(self, obs=6, actions=3, K_epochs=3, eps_clip=0.2, minibatch=8):
        self.actor = nn.Sequential(nn.Linear(obs, 32), nn.Tanh(), nn.Linear(32, actions))
        self.critic = nn.Sequential(nn.Linear(obs, 32), nn.Tanh(), nn.Linear(32, 1))
        self.opt = torch.optim.Adam([*self.actor.parameters(), *self.critic.parameters()], lr=3e-4)
        self.buffer = RolloutBuffer()
        self.K_epochs, self.eps_clip, self.minibatch = K_epochs, eps_clip, minibatch

    def act(self, state):
        with torch.no_grad():
            dist = Categorical(logits=self.actor(state))
            action = dist.sample()
            self.buffer.states.append(state)
            self.buffer.actions.append(action)
            self.buffer.logprobs.append(dist.log_prob(action))
            self.buffer.values.append(self.critic(state).squeeze(-1))
        return action.item()

    def update(self):
        returns = torch.tensor(self.buffer.rewards).flip(0).cumsum(0).flip(0)
        old_states = torch.stack(self.buffer.states).detach()
        old_actions = torch.stack(self.buffer.actions).detach()
        old_logprobs = torch.stack(self.buffer.logprobs).detach()
        advantages = returns - torch.stack(self.buffer.values).detach()
        n = len(old_states)
        for _ in range(self.K_epochs):
            for start in range(0, n, self.minibatch):
                idx = slice(start, start + self.minibatch)
                dist = Categorical(logits=self.actor(old_states[idx]))
                ratios = torch.exp(dist.log_prob(old_actions[idx]) - old_logprobs[idx])
                surr = torch.min(ratios * advantages[idx],
                                 ratios.clamp(1 - self.eps_clip, 1 + self.eps_clip) * advantages[idx])
                v = self.critic(old_states[idx]).squeeze(-1)
                loss = -surr.mean() + 0.5 * ((v - returns[idx]) ** 2).mean()
                self.opt.zero_grad()
                loss.backward()
                self.opt.step()
        self.buffer.clear()
