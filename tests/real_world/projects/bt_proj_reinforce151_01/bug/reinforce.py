import torch

from agent import Policy, select_action
from toy_env import LineWorld
from update import finish_episode

torch.manual_seed(0)
env = LineWorld()
policy = Policy()
optimizer = torch.optim.Adam(policy.parameters(), lr=1e-2)
for episode in range(3):
    state, done = env.reset(), False
    while not done:
        state, reward, done = env.step(select_action(policy, state))
        policy.rewards.append(reward)
    finish_episode(policy, optimizer)
    print("episode", episode)
