import torch.nn as nn
from torch.distributions import Categorical


class Actor(nn.Module):
    def __init__(self, obs_dim, n_actions):
        super().__init__()
        self.pi = nn.Sequential(nn.Linear(obs_dim, 32), nn.Tanh(), nn.Linear(32, n_actions))

    def log_prob(self, obs, actions):
        return Categorical(logits=self.pi(obs)).log_prob(actions)
