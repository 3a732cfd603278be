import torch
import torch.nn as nn
from torch.distributions import Categorical

torch.manual_seed(0)


class OrthogonalLinear(nn.Module):
    def __init__(self, n_in, n_out, gain=1.0):
        super().__init__()
        self.raw = nn.Parameter(torch.randn(max(n_in, n_out), min(n_in, n_out)))
        self.bias = nn.Parameter(torch.zeros(n_out))
        self.n_in, self.n_out, self.gain = n_in, n_out, gain

    def weight(self):
        q, r = torch.linalg.qr(self.raw)
        d = torch.diagonal(r)
        q = q * d.sign()
        w = q if self.n_out >= self.n_in else q.T
        return self.gain * w[: self.n_out, : self.n_in]

    def forward(self, x):
        return x @ self.weight().T + self.bias


class Policy(nn.Module):
    def __init__(self, obs_dim, n_actions):
        super().__init__()
        self.body = nn.Sequential(OrthogonalLinear(obs_dim, 16), nn.Tanh(), OrthogonalLinear(16, n_actions, 0.01))

    def forward(self, obs):
        return Categorical(logits=self.body(obs))


policy = Policy(4, 2)
opt = torch.optim.Adam(policy.parameters(), lr=3e-4)
for _ in range(2):
    obs = torch.randn(16, 4)
    dist = policy(obs)
    actions = dist.sample()
    advantages = torch.randn(16)
    loss = -(dist.log_prob(actions) * advantages).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
