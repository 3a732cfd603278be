import torch
import torch.nn as nn
from torch.distributions import Categorical


class Policy(nn.Module):
    def __init__(self):
        super().__init__()
        self.affine = nn.Sequential(nn.Linear(4, 32), nn.Dropout(p=0.6), nn.ReLU(), nn.Linear(32, 2))
        self.saved_log_probs, self.rewards = [], []

    def forward(self, x):
        return torch.softmax(self.affine(x), dim=-1)

    def select_action(self, state):
        m = Categorical(self(state))
        action = m.sample()
        self.saved_log_probs.append(m.log_prob(action))
        return action.item()
