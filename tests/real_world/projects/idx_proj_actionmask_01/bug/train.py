import torch

from agent import Policy
from env import MaskedBandit

torch.manual_seed(0)
env = MaskedBandit()
policy = Policy()
opt = torch.optim.Adam(policy.parameters(), lr=1e-2)
for update in range(5):
    obs, valid = env.observe(32)
    action, logp = policy.act(obs, valid)
    reward = env.reward(obs, action)
    loss = -((reward - reward.mean()) * logp).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
print("mean reward", reward.mean().item())
