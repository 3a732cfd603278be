import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Critic(nn.Module):
    def __init__(self, state_dim, action_dim):
        super().__init__()
        self.fcs1 = nn.Linear(state_dim, 32)
        self.fca1 = nn.Linear(action_dim, 32)
        self.fc2 = nn.Linear(64, 32)
        self.fc3 = nn.Linear(32, 1)

    def forward(self, state, action):
        x = torch.cat((F.relu(self.fcs1(state)), F.relu(self.fca1(action))), dim=1)
        return self.fc3(F.relu(self.fc2(x)))


class Actor(nn.Module):
    def __init__(self, state_dim, action_dim, action_lim=1.0):
        super().__init__()
        self.fc1 = nn.Linear(state_dim, 32)
        self.fc2 = nn.Linear(32, action_dim)
        self.action_lim = action_lim

    def forward(self, state):
        return torch.tanh(self.fc2(F.relu(self.fc1(state)))) * self.action_lim


class Trainer:
    def __init__(self, state_dim, action_dim, gamma=0.99):
        self.actor, self.critic = Actor(state_dim, action_dim), Critic(state_dim, action_dim)
        self.target_actor, self.target_critic = Actor(state_dim, action_dim), Critic(state_dim, action_dim)
        self.actor_optimizer = torch.optim.Adam(self.actor.parameters(), 1e-3)
        self.critic_optimizer = torch.optim.Adam(self.critic.parameters(), 1e-3)
        self.gamma = gamma

    def optimize(self, s1, a1, r1, s2):
        pred_a1 = self.actor.forward(s1)
        loss_actor = -1 * torch.sum(self.critic.forward(s1, pred_a1))

        a2 = self.target_actor.forward(s2).detach()
        next_val = torch.squeeze(self.target_critic.forward(s2, a2).detach())
        y_expected = r1 + self.gamma * next_val
        y_predicted = torch.squeeze(self.critic.forward(s1, a1))
        loss_critic = F.smooth_l1_loss(y_predicted, y_expected)
        self.critic_optimizer.zero_grad()
        loss_critic.backward()
        self.critic_optimizer.step()

        self.actor_optimizer.zero_grad()
        loss_actor.backward()
        self.actor_optimizer.step()


trainer = Trainer(state_dim=4, action_dim=2)
for _ in range(2):
    trainer.optimize(torch.randn(8, 4), torch.rand(8, 2), torch.randn(8), torch.randn(8, 4))
