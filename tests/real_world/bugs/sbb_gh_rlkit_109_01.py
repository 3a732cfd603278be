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


class TanhGaussianPolicy(nn.Module):
    def __init__(self, obs_dim, act_dim):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(obs_dim, 32), nn.ReLU())
        self.mean = nn.Linear(32, act_dim)
        self.log_std = nn.Linear(32, act_dim)

    def forward(self, obs):
        h = self.body(obs)
        dist = Normal(self.mean(h), self.log_std(h).clamp(-5, 2).exp())
        pre_tanh = dist.rsample()
        action = torch.tanh(pre_tanh)
        log_pi = (dist.log_prob(pre_tanh) - torch.log(1 - action.pow(2) + 1e-6)).sum(1, keepdim=True)
        return action, log_pi


class SACTrainer:
    def __init__(self, policy, qf1, target_qf1, alpha=0.2, discount=0.99):
        self.policy, self.qf1, self.target_qf1 = policy, qf1, target_qf1
        self.alpha, self.discount = alpha, discount
        self.policy_optimizer = torch.optim.Adam(policy.parameters(), lr=3e-4)
        self.qf1_optimizer = torch.optim.Adam(qf1.parameters(), lr=3e-4)

    def train_from_torch(self, batch):
        obs, actions, rewards, next_obs = batch["observations"], batch["actions"], batch["rewards"], batch["next_observations"]
        new_obs_actions, log_pi = self.policy(obs)
        q_new_actions = self.qf1(obs, new_obs_actions)
        policy_loss = (self.alpha * log_pi - q_new_actions).mean()

        q1_pred = self.qf1(obs, actions)
        with torch.no_grad():
            new_next_actions, new_log_pi = self.policy(next_obs)
            target_q = self.target_qf1(next_obs, new_next_actions) - self.alpha * new_log_pi
            q_target = rewards + self.discount * target_q
        qf1_loss = F.mse_loss(q1_pred, q_target)

        self.qf1_optimizer.zero_grad()
        qf1_loss.backward()
        self.qf1_optimizer.step()

        self.policy_optimizer.zero_grad()
        policy_loss.backward()
        self.policy_optimizer.step()


obs_dim, act_dim = 5, 2
trainer = SACTrainer(TanhGaussianPolicy(obs_dim, act_dim), QF(obs_dim, act_dim), QF(obs_dim, act_dim))
for _ in range(2):
    batch = {"observations": torch.randn(16, obs_dim), "actions": torch.rand(16, act_dim) * 2 - 1,
             "rewards": torch.randn(16, 1), "next_observations": torch.randn(16, obs_dim)}
    trainer.train_from_torch(batch)
