import math

import torch
from torch import nn

torch.manual_seed(0)


def build_mlp(input_dim, output_dim, hidden_units=(16, 16), hidden_activation=nn.Tanh()):
    layers = []
    units = input_dim
    for next_units in hidden_units:
        layers.append(nn.Linear(units, next_units))
        layers.append(hidden_activation)
        units = next_units
    layers.append(nn.Linear(units, output_dim))
    return nn.Sequential(*layers)


def reparameterize(means, log_stds):
    noises = torch.randn_like(means)
    us = means + noises * log_stds.exp()
    actions = torch.tanh(us)
    gaussian_log_probs = (-0.5 * noises.pow(2) - log_stds).sum(dim=-1, keepdim=True) - 0.5 * math.log(2 * math.pi) * log_stds.size(-1)
    log_pis = gaussian_log_probs - torch.log(1 - actions.pow(2) + 1e-6).sum(dim=-1, keepdim=True)
    return actions, log_pis


class StateDependentPolicy(nn.Module):
    def __init__(self, state_shape, action_shape, hidden_units=(16, 16), hidden_activation=nn.ReLU(inplace=True)):
        super().__init__()
        self.net = build_mlp(input_dim=state_shape[0], output_dim=2 * action_shape[0],
                             hidden_units=hidden_units, hidden_activation=hidden_activation)

    def forward(self, states):
        return torch.tanh(self.net(states).chunk(2, dim=-1)[0])

    def sample(self, states):
        means, log_stds = self.net(states).chunk(2, dim=-1)
        return reparameterize(means, log_stds.clamp(-20, 2))


class SAC:
    def __init__(self, state_shape, action_shape):
        self.actor = StateDependentPolicy(state_shape, action_shape)
        self.optim_actor = torch.optim.Adam(self.actor.parameters(), lr=3e-4)
        self.alpha = 0.2

    def update_actor(self, states):
        actions, log_pis = self.actor.sample(states)
        loss_actor = (self.alpha * log_pis - actions.sum(-1, keepdim=True)).mean()
        self.optim_actor.zero_grad()
        loss_actor.backward(retain_graph=False)
        self.optim_actor.step()


algo = SAC((3,), (2,))
algo.update_actor(torch.randn(5, 3))
