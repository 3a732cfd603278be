from typing import Iterable

import torch as th
import torch.nn as nn
from itertools import zip_longest

th.manual_seed(0)


def zip_strict(*iterables: Iterable) -> Iterable:
    sentinel = object()
    for combo in zip_longest(*iterables, fillvalue=sentinel):
        if sentinel in combo:
            raise ValueError("Iterables have different lengths")
        yield combo


def polyak_update(params, target_params, tau):
    with th.no_grad():
        # zip does not raise an exception if length of parameters does not match.
        for param, target_param in zip_strict(params, target_params):
            target_param.data.mul_(1 - tau)
            th.add(target_param.data, param.data, alpha=tau, out=target_param.data)


q_net = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 2))
q_net_target = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 2))
q_net_target.load_state_dict(q_net.state_dict())
optimizer = th.optim.Adam(q_net.parameters(), lr=1e-3)
gamma, tau = 0.99, 0.005

for gradient_step in range(3):
    observations, next_observations = th.randn(8, 4), th.randn(8, 4)
    actions, rewards, dones = th.randint(0, 2, (8, 1)), th.randn(8, 1), th.zeros(8, 1)
    with th.no_grad():
        # Compute the next Q-values using the target network
        next_q_values = q_net_target(next_observations)
        # Follow greedy policy: use the one with the highest value
        next_q_values, _ = next_q_values.max(dim=1)
        # Avoid potential broadcast issue
        next_q_values = next_q_values.reshape(-1, 1)
        # 1-step TD target
        target_q_values = rewards + (1 - dones) * gamma * next_q_values

    # Get current Q-values estimates
    current_q_values = q_net(observations)
    # Retrieve the q-values for the actions from the replay buffer
    current_q_values = th.gather(current_q_values, dim=1, index=actions.long())
    # Compute Huber loss (less sensitive to outliers)
    loss = nn.functional.smooth_l1_loss(current_q_values, target_q_values)

    # Optimize the policy
    optimizer.zero_grad()
    loss.backward()
    # Clip gradient norm
    th.nn.utils.clip_grad_norm_(q_net.parameters(), 10)
    optimizer.step()
    polyak_update(q_net.parameters(), q_net_target.parameters(), tau)
