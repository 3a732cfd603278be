import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Agent:
    def __init__(self, obs_dim, act_dim, hidden=16, shared_encoder=False):
        self.encoder = nn.GRU(obs_dim, hidden, batch_first=True)
        self.critic_encoder = self.encoder if shared_encoder else nn.GRU(obs_dim, hidden, batch_first=True)
        self.actor = nn.Sequential(nn.Linear(hidden, act_dim), nn.Tanh())
        self.critic = nn.Linear(hidden + act_dim, 1)
        critic_params = list(self.critic.parameters()) + list(self.critic_encoder.parameters())
        actor_params = list(self.actor.parameters()) + ([] if shared_encoder else list(self.encoder.parameters()))
        self.critic_optimizer = torch.optim.Adam(critic_params, lr=1e-3)
        self.actor_optimizer = torch.optim.Adam(actor_params, lr=1e-3)

    def update(self, obs_seq, actions, td_target):
        seq, _ = self.encoder(obs_seq)
        critic_seq, _ = self.critic_encoder(obs_seq)
        q = self.critic(torch.cat([critic_seq, actions], -1)).squeeze(-1)
        critic_loss = F.mse_loss(q, td_target)
        new_actions = self.actor(seq)
        actor_loss = -self.critic(torch.cat([critic_seq, new_actions], -1)).mean()
        self.critic_optimizer.zero_grad()
        critic_loss.backward(retain_graph=True)
        self.critic_optimizer.step()
        self.actor_optimizer.zero_grad()
        actor_loss.backward()
        self.actor_optimizer.step()


agent = Agent(obs_dim=5, act_dim=2, shared_encoder=True)
for _ in range(2):
    agent.update(torch.randn(4, 6, 5), torch.rand(4, 6, 2) * 2 - 1, torch.randn(4, 6))
