import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Normal

torch.manual_seed(0)


class QF(nn.Module):
    def __init__(self, obs_dim, act_dim):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(obs_dim + act_dim, 32), nn.ReLU(), nn.Linear(32, 1))

    def forward(self, obs, act):
        return self.net(torch.cat([obs, act], dim=1))


class GaussianPolicy(nn.Module):
    def __init__(self, obs_dim, act_dim):
        super().__init__()
        self.mean = nn.Linear(obs_dim, act_dim)
        self.log_std = nn.Parameter(torch.zeros(act_dim))

    def forward(self, obs):
        dist = Normal(self.mean(obs), self.log_std.exp())
        pre_tanh = dist.rsample()
        action = torch.tanh(pre_tanh)
        return action, (dist.log_prob(pre_tanh) - torch.log(1 - action.pow(2) + 1e-6)).sum(1, keepdim=True)


class SACTrainer:
    def __init__(self, policy, qf1, target_qf1, alpha=0.2, discount=0.99):
        self.policy, self.qf1, self.target_qf1 = policy, qf1, target_qf1
        self.alpha, self.discount = alpha, discount
        self.policy_optimizer = torch.optim.Adam(policy.parameters(), lr=3e-4)
        self.qf1_optimizer = torch.optim.Adam(qf1.parameters(), lr=3e-4)

    def train_from_torch(self, obs, actions, rewards, next_obs):
        new_obs_actions, log_pi = self.policy(obs)
        policy_loss = (self.alpha * log_pi - self.qf1(obs, new_obs_actions)).mean()
        q1_pred = self.qf1(obs, actions)
        with torch.no_grad():
            next_actions, next_log_pi = self.policy(next_obs)
            q_target = rewards + self.discount * (self.target_qf1(next_obs, next_actions) - self.alpha * next_log_pi)
        qf1_loss = F.mse_loss(q1_pred, q_target)

        self.policy_optimizer.zero_grad()
        policy_loss.backward()
        self.policy_optimizer.step()

        self.qf1_optimizer.zero_grad()
        qf1_loss.backward()
        self.qf1_optimizer.step()


trainer = SACTrainer(GaussianPolicy(5, 2), QF(5, 2), QF(5, 2))
for _ in range(2):
    trainer.train_from_torch(torch.randn(16, 5), torch.rand(16, 2) * 2 - 1, torch.randn(16, 1), torch.randn(16, 5))
