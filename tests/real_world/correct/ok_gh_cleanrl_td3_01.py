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
        return self.fc3(x)


class Actor(nn.Module):
    def __init__(self, obs_dim, act_dim):
        super().__init__()
        self.fc1 = nn.Linear(obs_dim, 16)
        self.fc_mu = nn.Linear(16, act_dim)
        self.register_buffer("action_scale", torch.tensor(1.0))
        self.register_buffer("action_bias", torch.tensor(0.0))

    def forward(self, x):
        x = F.relu(self.fc1(x))
        return torch.tanh(self.fc_mu(x)) * self.action_scale + self.action_bias


obs_dim, act_dim = 3, 1
gamma, tau, policy_noise, noise_clip, policy_frequency = 0.99, 0.005, 0.2, 0.5, 2
actor, target_actor = Actor(obs_dim, act_dim), Actor(obs_dim, act_dim)
qf1, qf2, qf1_target, qf2_target = (QNetwork(obs_dim, act_dim) for _ in range(4))
target_actor.load_state_dict(actor.state_dict())
qf1_target.load_state_dict(qf1.state_dict())
qf2_target.load_state_dict(qf2.state_dict())
q_optimizer = optim.Adam(list(qf1.parameters()) + list(qf2.parameters()), lr=3e-4)
actor_optimizer = optim.Adam(list(actor.parameters()), lr=3e-4)

for global_step in range(4):
    observations, next_observations = torch.randn(8, obs_dim), torch.randn(8, obs_dim)
    actions, rewards, dones = torch.rand(8, act_dim) * 2 - 1, torch.randn(8), torch.zeros(8)
    with torch.no_grad():
        clipped_noise = (torch.randn_like(actions) * policy_noise).clamp(-noise_clip, noise_clip) * target_actor.action_scale
        next_state_actions = (target_actor(next_observations) + clipped_noise).clamp(-1.0, 1.0)
        qf1_next_target = qf1_target(next_observations, next_state_actions)
        qf2_next_target = qf2_target(next_observations, next_state_actions)
        min_qf_next_target = torch.min(qf1_next_target, qf2_next_target)
        next_q_value = rewards.flatten() + (1 - dones.flatten()) * gamma * (min_qf_next_target).view(-1)

    qf1_a_values = qf1(observations, actions).view(-1)
    qf2_a_values = qf2(observations, actions).view(-1)
    qf1_loss = F.mse_loss(qf1_a_values, next_q_value)
    qf2_loss = F.mse_loss(qf2_a_values, next_q_value)
    qf_loss = qf1_loss + qf2_loss

    # optimize the model
    q_optimizer.zero_grad()
    qf_loss.backward()
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
        for param, target_param in zip(qf2.parameters(), qf2_target.parameters()):
            target_param.data.copy_(tau * param.data + (1 - tau) * target_param.data)
