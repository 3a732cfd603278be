import torch

from episode import finish_episode
from policy import Policy

torch.manual_seed(0)
policy = Policy()
optimizer = torch.optim.Adam(policy.parameters(), lr=1e-2)
for episode in range(3):
    state = torch.zeros(4)
    for t in range(8):
        action = policy.select_action(state)
        state = state + (1.0 if action else -1.0) * 0.1
        policy.rewards.append(float(action))
    finish_episode(policy, optimizer)
print("ok")
