import torch.nn as nn


class Critic(nn.Module):
    def __init__(self, obs_dim):
        super().__init__()
        self.v = nn.Sequential(nn.Linear(obs_dim, 32), nn.Tanh(), nn.Linear(32, 1))

    def forward(self, obs):
        return self.v(obs)
