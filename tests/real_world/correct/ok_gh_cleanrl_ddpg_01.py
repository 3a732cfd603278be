import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim

torch.manual_seed(1)


class QNetwork(nn.Module):
    def __init__(self, obs_dim, act_dim):
        super().__init__()
        self.fc1 = nn.Linear(obs_dim + act_dim, 16)
        self.fc2 = nn.Linear(16, 16)
        self.fc3 = nn.Linear(16, 1)

    def forward(self, x, a):
        x = torch.cat([x, a], 1)
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        x = self.fc3(x)
        return x


class Actor(nn.Module):
    def __init__(self, obs_dim, act_dim):
        super().__init__()
        self.fc1 = nn.Linear(obs_dim, 16)
        self.fc2 = nn.Linear(16, 16)
        self.fc_mu = nn.Linear(16, act_dim)
        # action rescaling
        self.register_buffer("action_scale", torch.tensor(1.0))
        self.register_buffer("action_bias", torch.tensor(0.0))

    def forward(self, x):
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        x = torch.tanh(self.fc_mu(x))
        return x * self.action_scale + self.action_bias


obs_dim, act_dim = 3, 1
actor = Actor(obs_dim, act_dim)
qf1 = QNetwork(obs_dim, act_dim)
qf1_target = QNetwork(obs_dim, act_dim)
target_actor = Actor(obs_dim, act_dim)
target_actor.load_state_dict(actor.state_dict())
qf1_target.load_state_dict(qf1.state_dict())
q_optimizer = optim.Adam(list(qf1.parameters()), lr=3e-4)
actor_optimizer = optim.Adam(list(actor.parameters()), lr=3e-4)
gamma, tau, policy_frequency = 0.99, 0.005, 2

for global_step in range(4):
    observations, next_observations = torch.randn(8, obs_dim), torch.randn(8, obs_dim)
    actions, rewards, dones = torch.rand(8, act_dim) * 2 - 1, torch.randn(8), torch.zeros(8)
    with torch.no_grad():
        next_state_actions = target_actor(next_observations)
        qf1_next_target = qf1_target(next_observations, next_state_actions)
        next_q_value = rewards.flatten() + (1 - dones.flatten()) * gamma * (qf1_next_target).view(-1)

    qf1_a_values = qf1(observations, actions).view(-1)
    qf1_loss = F.mse_loss(qf1_a_values, next_q_value)

    # optimize the model
    q_optimizer.zero_grad()
    qf1_loss.backward()
    q_optimizer.step()

    if global_step % policy_frequency == 0:
        actor_loss = -qf1(observations, actor(observations)).mean()
        actor_optimizer.zero_grad()
        actor_loss.backward()
        actor_optimizer.step()

        # update the target network
        for param, target_param in zip(actor.parameters(), target_actor.parameters()):
            target_param.data.copy_(tau * param.data + (1 - tau) * target_param.data)
        for param, target_param in zip(qf1.parameters(), qf1_target.parameters()):
            target_param.data.copy_(tau * param.data + (1 - tau) * target_param.data)
