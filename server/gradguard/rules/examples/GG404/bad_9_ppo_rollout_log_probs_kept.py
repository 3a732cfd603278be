import torch
from torch import nn
from torch.distributions import Categorical


def train(policy, opt, iterations=2, epochs=2, minibatch=4):
    for it in range(iterations):
        obs = torch.randn(8, 4)
        dist = Categorical(logits=policy(obs))
        actions = dist.sample()
        old_logp = dist.log_prob(actions)  # kept with the rollout's graph
        n = len(obs)
        for _ in range(epochs):
            for start in range(0, n, minibatch):
                idx = torch.arange(start, min(start + minibatch, n))
                new_logp = Categorical(logits=policy(obs[idx])).log_prob(actions[idx])
                ratio = torch.exp(new_logp - old_logp[idx])
                loss = -ratio.clamp(0.8, 1.2).mean()
                opt.zero_grad()
                loss.backward()  # <- GG404
                opt.step()


torch.manual_seed(0)
policy = nn.Sequential(nn.Linear(4, 16), nn.Tanh(), nn.Linear(16, 2))
train(policy, torch.optim.Adam(policy.parameters(), lr=1e-3))
