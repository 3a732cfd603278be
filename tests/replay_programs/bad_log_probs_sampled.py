import random

import torch
import torch.nn as nn

# A replay buffer of log-probs kept with their graphs: each update samples from it, and the second update's sample
# holds entries whose graph the first update's backward already freed (4 + 4 draws from 6 entries must overlap).
torch.manual_seed(0)
random.seed(0)
policy = nn.Linear(4, 2)
opt = torch.optim.Adam(policy.parameters(), lr=1e-2)
buffer = []


def collect(steps=6):
    for _ in range(steps):
        log_prob = torch.log_softmax(policy(torch.randn(1, 4)), dim=1)[0, 0]
        buffer.append((log_prob, 1.0))


def update(batch_size=4):
    batch = random.sample(buffer, batch_size)
    loss = torch.stack([-log_prob * ret for log_prob, ret in batch]).sum()
    opt.zero_grad()
    loss.backward()  # <- GG404
    opt.step()


collect()
for _ in range(2):
    update()
