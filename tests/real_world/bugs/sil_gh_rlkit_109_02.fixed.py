import copy

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class QF(nn.Module):
    def __init__(self, obs_dim, act_dim):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(obs_dim + act_dim, 32), nn.ReLU(), nn.Linear(32, 1))

    def forward(self, obs, act):
        return self.net(torch.cat([obs, act], dim=1))


class SACTrainer:
    def __init__(self, policy, qf1, discount=0.99):
        self.policy, self.qf1, self.discount = policy, qf1, discount
        self.policy_optimizer = torch.optim.Adam(policy.parameters(), lr=3e-4)
        self.qf1_optimizer = torch.optim.Adam(qf1.parameters(), lr=1e-1, fused=True)

    def train_from_torch(self, obs, actions, rewards):
        new_obs_actions = torch.tanh(self.policy(obs))
        policy_loss = -self.qf1(obs, new_obs_actions).mean()
        qf1_loss = F.mse_loss(self.qf1(obs, actions), rewards)

        self.policy_optimizer.zero_grad()
        policy_loss.backward()
        policy_grads = [p.grad.clone() for p in self.policy.parameters()]
        self.policy_optimizer.step()

        self.qf1_optimizer.zero_grad()
        qf1_loss.backward()
        self.qf1_optimizer.step()
        return policy_grads


policy, qf1 = nn.Linear(5, 2), QF(5, 2)
policy_ref, qf1_ref = copy.deepcopy(policy), copy.deepcopy(qf1)
obs, actions, rewards = torch.randn(16, 5), torch.rand(16, 2) * 2 - 1, torch.randn(16, 1)
grads = SACTrainer(policy, qf1).train_from_torch(obs, actions, rewards)

(-qf1_ref(obs, torch.tanh(policy_ref(obs))).mean()).backward()
if not all(torch.allclose(g, p.grad, atol=1e-6) for g, p in zip(grads, policy_ref.parameters())):
    print("wrong gradient: the policy gradient went through the Q weights the fused step had already changed")
else:
    print("gradient ok")
