import torch
from torch import nn
from torch.distributions import Categorical

torch.manual_seed(0)
policy = nn.Sequential(nn.Linear(4, 16), nn.Tanh(), nn.Linear(16, 2))
opt = torch.optim.Adam(policy.parameters(), lr=1e-2)
log_probs, rewards = [], []


def finish_episode():
    returns = torch.tensor(rewards)
    returns = (returns - returns.mean()) / (returns.std() + 1e-8)
    loss = torch.stack([-lp * r for lp, r in zip(log_probs, returns)]).sum()
    opt.zero_grad()
    loss.backward()
    opt.step()


for episode in range(3):
    for t in range(5):
        state = torch.randn(4)
        dist = Categorical(logits=policy(state))
        action = dist.sample()
        log_probs.append(dist.log_prob(action))
        rewards.append(float(action.item()))
    finish_episode()
