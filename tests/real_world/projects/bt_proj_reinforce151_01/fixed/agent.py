import torch
import torch.nn as nn
from torch.distributions import Categorical


class Policy(nn.Module):
    def __init__(self, obs=4, actions=2):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(obs, 32), nn.ReLU(), nn.Linear(32, actions))
        self.saved_log_probs = []
        self.rewards = []

    def forward(self, x):
        return torch.softmax(self.net(x), dim=-1)


def select_action(policy, state):
    m = Categorical(policy(state))
    action = m.sample()
    policy.saved_log_probs.append(m.log_prob(action))
    return action.item()
