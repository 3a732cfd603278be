import random

import torch
import torch.nn as nn

# The buffer keeps what is needed to recompute (the state and the return); each update runs the policy again on
# the sampled states, so every backward goes through a graph of its own.
torch.manual_seed(0)
random.seed(0)
policy = nn.Linear(4, 2)
opt = torch.optim.Adam(policy.parameters(), lr=1e-2)
buffer = []


def collect(steps=6):
    for _ in range(steps):
        buffer.append((torch.randn(1, 4), 1.0))


def update(batch_size=4):
    batch = random.sample(buffer, batch_size)
    loss = torch.stack([-torch.log_softmax(policy(state), dim=1)[0, 0] * ret for state, ret in batch]).sum()
    opt.zero_grad()
    loss.backward()
    opt.step()


collect()
for _ in range(2):
    update()
