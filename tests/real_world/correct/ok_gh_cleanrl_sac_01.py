import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim

torch.manual_seed(1)
LOG_STD_MAX, LOG_STD_MIN = 2, -5


class SoftQNetwork(nn.Module):
    def __init__(self, obs_dim, act_dim):
        super().__init__()
        self.fc1 = nn.Linear(obs_dim + act_dim, 16)
        self.fc3 = nn.Linear(16, 1)

    def forward(self, x, a):
        return self.fc3(F.relu(self.fc1(torch.cat([x, a], 1))))


class Actor(nn.Module):
    def __init__(self, obs_dim, act_dim):
        super().__init__()
        self.fc1 = nn.Linear(obs_dim, 16)
        self.fc_mean = nn.Linear(16, act_dim)
        self.fc_logstd = nn.Linear(16, act_dim)
        self.register_buffer("action_scale", torch.tensor(1.0))
        self.register_buffer("action_bias", torch.tensor(0.0))

    def forward(self, x):
        x = F.relu(self.fc1(x))
        mean = self.fc_mean(x)
        log_std = torch.tanh(self.fc_logstd(x))
        log_std = LOG_STD_MIN + 0.5 * (LOG_STD_MAX - LOG_STD_MIN) * (log_std + 1)  # From SpinUp / Denis Yarats
        return mean, log_std

    def get_action(self, x):
        mean, log_std = self(x)
        std = log_std.exp()
        normal = torch.distributions.Normal(mean, std)
        x_t = normal.rsample()  # for reparameterization trick (mean + std * N(0,1))
        y_t = torch.tanh(x_t)
        action = y_t * self.action_scale + self.action_bias
        log_prob = normal.log_prob(x_t)
        # Enforcing Action Bound
        log_prob -= torch.log(self.action_scale * (1 - y_t.pow(2)) + 1e-6)
        log_prob = log_prob.sum(1, keepdim=True)
        mean = torch.tanh(mean) * self.action_scale + self.action_bias
        return action, log_prob, mean


obs_dim, act_dim = 3, 1
gamma, tau, policy_frequency, target_network_frequency = 0.99, 0.005, 2, 1
actor = Actor(obs_dim, act_dim)
qf1, qf2, qf1_target, qf2_target = (SoftQNetwork(obs_dim, act_dim) for _ in range(4))
qf1_target.load_state_dict(qf1.state_dict())
qf2_target.load_state_dict(qf2.state_dict())
q_optimizer = optim.Adam(list(qf1.parameters()) + list(qf2.parameters()), lr=1e-3)
actor_optimizer = optim.Adam(list(actor.parameters()), lr=3e-4)

# Automatic entropy tuning
target_entropy = -float(act_dim)
log_alpha = torch.zeros(1, requires_grad=True)
alpha = log_alpha.exp().item()
a_optimizer = optim.Adam([log_alpha], lr=1e-3)

for global_step in range(4):
    observations, next_observations = torch.randn(8, obs_dim), torch.randn(8, obs_dim)
    actions, rewards, dones = torch.rand(8, act_dim) * 2 - 1, torch.randn(8), torch.zeros(8)
    with torch.no_grad():
        next_state_actions, next_state_log_pi, _ = actor.get_action(next_observations)
        qf1_next_target = qf1_target(next_observations, next_state_actions)
        qf2_next_target = qf2_target(next_observations, next_state_actions)
        min_qf_next_target = torch.min(qf1_next_target, qf2_next_target) - alpha * next_state_log_pi
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

    if global_step % policy_frequency == 0:  # TD 3 Delayed update support
        for _ in range(policy_frequency):  # compensate for the delay by doing 'actor_update_interval' instead of 1
            pi, log_pi, _ = actor.get_action(observations)
            qf1_pi = qf1(observations, pi)
            qf2_pi = qf2(observations, pi)
            min_qf_pi = torch.min(qf1_pi, qf2_pi)
            actor_loss = ((alpha * log_pi) - min_qf_pi).mean()

            actor_optimizer.zero_grad()
            actor_loss.backward()
            actor_optimizer.step()

            with torch.no_grad():
                _, log_pi, _ = actor.get_action(observations)
            alpha_loss = (-log_alpha.exp() * (log_pi + target_entropy)).mean()

            a_optimizer.zero_grad()
            alpha_loss.backward()
            a_optimizer.step()
            alpha = log_alpha.exp().item()

    # update the target networks
    if global_step % target_network_frequency == 0:
        for param, target_param in zip(qf1.parameters(), qf1_target.parameters()):
            target_param.data.copy_(tau * param.data + (1 - tau) * target_param.data)
        for param, target_param in zip(qf2.parameters(), qf2_target.parameters()):
            target_param.data.copy_(tau * param.data + (1 - tau) * target_param.data)
