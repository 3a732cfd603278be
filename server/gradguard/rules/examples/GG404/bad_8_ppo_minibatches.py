import torch
import torch.nn as nn
from torch.distributions import Normal

torch.manual_seed(0)
actor = nn.Sequential(nn.Linear(3, 16), nn.Tanh(), nn.Linear(16, 1))
log_std = nn.Parameter(torch.zeros(1))
opt = torch.optim.Adam([*actor.parameters(), log_std], lr=3e-4)
obs = torch.randn(32, 3)
dist = Normal(actor(obs).squeeze(-1), log_std.exp())  # the rollout's policy
actions = dist.sample()
old_logp = dist.log_prob(actions)  # kept with its graph: meant as a constant
advantages = -(actions - obs[:, 0]) ** 2
for epoch in range(2):
    perm = torch.randperm(32)
    for start in range(0, 32, 8):  # minibatches of the same rollout
        idx = perm[start:start + 8]
        new_dist = Normal(actor(obs[idx]).squeeze(-1), log_std.exp())
        ratio = (new_dist.log_prob(actions[idx]) - old_logp[idx]).exp()
        loss = -(ratio.clamp(0.8, 1.2) * advantages[idx]).mean()
        opt.zero_grad()
        loss.backward()  # <- GG404
        opt.step()
