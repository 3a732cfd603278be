import torch
import torch.nn as nn


class Policy(nn.Module):
    def __init__(self, obs, act):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(obs, 32), nn.ReLU(), nn.Linear(32, act))

    def forward(self, s):
        return torch.softmax(self.body(s), dim=-1)


class Agent:
    def __init__(self, obs=4, act=2, gamma=0.99):
        self.policy = Policy(obs, act)
        self.opt = torch.optim.Adam(self.policy.parameters(), lr=1e-2)
        self.gamma = gamma
        self.log_probs = []
        self.rewards = []

    def act(self, state):
        dist = torch.distributions.Categorical(self.policy(state))
        a = dist.sample()
        self.log_probs.append(dist.log_prob(a))
        return a.item()

    def finish_episode(self):
        R, returns = 0.0, []
        for r in reversed(self.rewards):
            R = r + self.gamma * R
            returns.insert(0, R)
        returns = torch.tensor(returns)
        returns = (returns - returns.mean()) / (returns.std() + 1e-8)
        loss = torch.stack([-lp * g for lp, g in zip(self.log_probs, returns)]).sum()
        self.opt.zero_grad()
        loss.backward()  # <- GG404
        self.opt.step()
        del self.rewards[:]


def run(agent, episodes=3):
    for episode in range(episodes):
        for t in range(5):
            agent.act(torch.randn(4))
            agent.rewards.append(1.0)
        agent.finish_episode()


torch.manual_seed(0)
run(Agent())
