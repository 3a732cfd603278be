import torch
import torch.nn as nn
from torch.distributions import Categorical

torch.manual_seed(0)


class Policy(nn.Module):
    def __init__(self, obs_dim, n_actions):
        super().__init__()
        self.actor = nn.Sequential(nn.Linear(obs_dim, 32), nn.Tanh(), nn.Linear(32, n_actions))
        self.critic = nn.Sequential(nn.Linear(obs_dim, 32), nn.Tanh(), nn.Linear(32, 1))

    def act(self, inputs):
        dist = Categorical(logits=self.actor(inputs))
        action = dist.sample()
        return self.critic(inputs), action, dist.log_prob(action)

    def evaluate_actions(self, inputs, action):
        dist = Categorical(logits=self.actor(inputs))
        return self.critic(inputs), dist.log_prob(action), dist.entropy().mean()


class PPO:
    def __init__(self, actor_critic, clip_param=0.2, ppo_epoch=4):
        self.actor_critic, self.clip_param, self.ppo_epoch = actor_critic, clip_param, ppo_epoch
        self.optimizer = torch.optim.Adam(actor_critic.parameters(), lr=7e-4)

    def update(self, obs, actions, returns, value_preds, old_action_log_probs):
        advantages = returns - value_preds
        advantages = (advantages - advantages.mean()) / (advantages.std() + 1e-5)
        for e in range(self.ppo_epoch):
            values, action_log_probs, dist_entropy = self.actor_critic.evaluate_actions(obs, actions)
            ratio = torch.exp(action_log_probs - old_action_log_probs)
            surr1 = ratio * advantages
            surr2 = torch.clamp(ratio, 1.0 - self.clip_param, 1.0 + self.clip_param) * advantages
            action_loss = -torch.min(surr1, surr2).mean()
            value_loss = 0.5 * (returns - values.squeeze(-1)).pow(2).mean()
            self.optimizer.zero_grad()
            (value_loss * 0.5 + action_loss - dist_entropy * 0.01).backward()
            nn.utils.clip_grad_norm_(self.actor_critic.parameters(), 0.5)
            self.optimizer.step()


actor_critic = Policy(4, 2)
agent = PPO(actor_critic)
obs = torch.randn(16, 4)
with torch.no_grad():
    value, action, action_log_prob = actor_critic.act(obs)
agent.update(obs, action, torch.randn(16), value.squeeze(-1), action_log_prob)
