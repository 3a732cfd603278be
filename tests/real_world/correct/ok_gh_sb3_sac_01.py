import numpy as np
import torch as th
import torch.nn as nn
from torch.nn import functional as F

th.manual_seed(0)


def polyak_update(params, target_params, tau):
    with th.no_grad():
        for param, target_param in zip(params, target_params):
            target_param.data.mul_(1 - tau)
            th.add(target_param.data, param.data, alpha=tau, out=target_param.data)


class Actor(nn.Module):
    def __init__(self, obs_dim, act_dim):
        super().__init__()
        self.latent_pi = nn.Sequential(nn.Linear(obs_dim, 16), nn.ReLU())
        self.mu = nn.Linear(16, act_dim)
        self.log_std = nn.Linear(16, act_dim)
        self.optimizer = th.optim.Adam(self.parameters(), lr=3e-4)

    def action_log_prob(self, obs):
        latent = self.latent_pi(obs)
        mean, log_std = self.mu(latent), self.log_std(latent).clamp(-20, 2)
        gaussian = th.distributions.Normal(mean, log_std.exp())
        pre_tanh = gaussian.rsample()
        actions = th.tanh(pre_tanh)
        log_prob = gaussian.log_prob(pre_tanh).sum(-1) - th.log(1 - actions ** 2 + 1e-6).sum(-1)
        return actions, log_prob


class ContinuousCritic(nn.Module):
    def __init__(self, obs_dim, act_dim, n_critics=2):
        super().__init__()
        self.q_networks = nn.ModuleList([nn.Sequential(nn.Linear(obs_dim + act_dim, 16), nn.ReLU(), nn.Linear(16, 1)) for _ in range(n_critics)])
        self.optimizer = th.optim.Adam(self.parameters(), lr=3e-4)

    def forward(self, obs, actions):
        qvalue_input = th.cat([obs, actions], dim=1)
        return tuple(q_net(qvalue_input) for q_net in self.q_networks)


class SAC:
    def __init__(self, obs_dim=3, act_dim=2, gamma=0.99, tau=0.005):
        self.actor = Actor(obs_dim, act_dim)
        self.critic = ContinuousCritic(obs_dim, act_dim)
        self.critic_target = ContinuousCritic(obs_dim, act_dim)
        self.critic_target.load_state_dict(self.critic.state_dict())
        self.gamma, self.tau, self.target_entropy = gamma, tau, -float(act_dim)
        self.log_ent_coef = th.log(th.ones(1) * 1.0).requires_grad_(True)
        self.ent_coef_optimizer = th.optim.Adam([self.log_ent_coef], lr=3e-4)

    def train(self, gradient_steps, batch_size=8):
        ent_coef_losses, actor_losses, critic_losses = [], [], []
        for gradient_step in range(gradient_steps):
            obs, next_obs = th.randn(batch_size, 3), th.randn(batch_size, 3)
            acts, rewards, dones = th.rand(batch_size, 2) * 2 - 1, th.randn(batch_size, 1), th.zeros(batch_size, 1)

            # Action by the current actor for the sampled state
            actions_pi, log_prob = self.actor.action_log_prob(obs)
            log_prob = log_prob.reshape(-1, 1)

            ent_coef = th.exp(self.log_ent_coef.detach())
            ent_coef_loss = -(self.log_ent_coef * (log_prob + self.target_entropy).detach()).mean()
            ent_coef_losses.append(ent_coef_loss.item())

            # Optimize entropy coefficient, also called
            # entropy temperature or alpha in the paper
            self.ent_coef_optimizer.zero_grad()
            ent_coef_loss.backward()
            self.ent_coef_optimizer.step()

            with th.no_grad():
                # Select action according to policy
                next_actions, next_log_prob = self.actor.action_log_prob(next_obs)
                # Compute the next Q values: min over all critics targets
                next_q_values = th.cat(self.critic_target(next_obs, next_actions), dim=1)
                next_q_values, _ = th.min(next_q_values, dim=1, keepdim=True)
                # add entropy term
                next_q_values = next_q_values - ent_coef * next_log_prob.reshape(-1, 1)
                # td error + entropy term
                target_q_values = rewards + (1 - dones) * self.gamma * next_q_values

            # Get current Q-values estimates for each critic network
            # using action from the replay buffer
            current_q_values = self.critic(obs, acts)

            # Compute critic loss
            critic_loss = 0.5 * sum(F.mse_loss(current_q, target_q_values) for current_q in current_q_values)
            critic_losses.append(critic_loss.item())

            # Optimize the critic
            self.critic.optimizer.zero_grad()
            critic_loss.backward()
            self.critic.optimizer.step()

            # Compute actor loss
            # Min over all critic networks
            q_values_pi = th.cat(self.critic(obs, actions_pi), dim=1)
            min_qf_pi, _ = th.min(q_values_pi, dim=1, keepdim=True)
            actor_loss = (ent_coef * log_prob - min_qf_pi).mean()
            actor_losses.append(actor_loss.item())

            # Optimize the actor
            self.actor.optimizer.zero_grad()
            actor_loss.backward()
            self.actor.optimizer.step()

            polyak_update(self.critic.parameters(), self.critic_target.parameters(), self.tau)
        return np.mean(actor_losses), np.mean(critic_losses)


SAC().train(gradient_steps=3)
