import random

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.distributions import Categorical

torch.manual_seed(0)
random.seed(0)


class Policy(nn.Module):
    def __init__(self):
        super().__init__()
        self.affine1 = nn.Linear(4, 32)
        self.affine2 = nn.Linear(32, 2)

    def forward(self, x):
        return F.softmax(self.affine2(F.relu(self.affine1(x))), dim=1)


policy = Policy()
optimizer = optim.Adam(policy.parameters(), lr=1e-2)
experience = []


def run_episode(steps=6, gamma=0.99):
    log_probs, rewards = [], []
    for t in range(steps):
        state = torch.from_numpy(np.random.randn(4).astype(np.float32)).unsqueeze(0)
        probs = policy(state)
        m = Categorical(probs)
        action = m.sample()
        log_prob = m.log_prob(action)
        log_probs.append(log_prob)
        rewards.append(float(action.item() == 1))
    R, returns = 0.0, []
    for r in rewards[::-1]:
        R = r + gamma * R
        returns.insert(0, R)
    for log_prob, ret in zip(log_probs, returns):
        experience.append((log_prob, ret))


def finish_episode(batch_size=4):
    batch = random.sample(experience, min(batch_size, len(experience)))
    policy_loss = torch.stack([-log_prob * ret for log_prob, ret in batch]).sum()
    optimizer.zero_grad()
    policy_loss.backward()
    optimizer.step()


np.random.seed(0)
for i_episode in range(2):
    run_episode()
    for _ in range(3):
        finish_episode()
