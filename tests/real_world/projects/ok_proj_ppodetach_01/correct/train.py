import torch

from ppo import PPO

torch.manual_seed(0)
agent = PPO()
for update in range(2):
    for t in range(20):
        state = torch.randn(6)
        action = agent.act(state)
        agent.buffer.rewards.append(float(action == 0))
    agent.update()
    print("update", update)
