import torch
import torch.nn as nn

from agent.masking import apply_action_mask


class Policy(nn.Module):
    def __init__(self, obs_dim=6, n_actions=5):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(obs_dim, 32), nn.Tanh(), nn.Linear(32, n_actions))

    def act(self, obs, valid):
        probs = torch.softmax(self.net(obs), dim=-1)
        probs = apply_action_mask(probs, valid)
        dist = torch.distributions.Categorical(probs=probs)
        action = dist.sample()
        return action, dist.log_prob(action)
