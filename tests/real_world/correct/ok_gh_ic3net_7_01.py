import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class CommNetPolicy(nn.Module):
    def __init__(self, obs_dim, hid, n_actions):
        super().__init__()
        self.encoder = nn.Linear(obs_dim, hid)
        self.lstm = nn.LSTMCell(hid, hid)
        self.head = nn.Linear(hid, n_actions)

    def forward(self, obs, prev_hid):
        h, c = self.lstm(torch.tanh(self.encoder(obs)), prev_hid)
        return F.log_softmax(self.head(h), -1), (h, c)


class Trainer:
    def __init__(self, policy, detach_gap=3):
        self.policy, self.detach_gap = policy, detach_gap
        self.optimizer = torch.optim.RMSprop(policy.parameters(), lr=1e-3)

    def run_episode(self, n_agents=3, steps=7):
        prev_hid = (torch.zeros(n_agents, 8), torch.zeros(n_agents, 8))
        log_probs, rewards = [], []
        for t in range(steps):
            log_p, prev_hid = self.policy(torch.randn(n_agents, 5), prev_hid)
            action = torch.distributions.Categorical(logits=log_p).sample()
            log_probs.append(log_p.gather(1, action[:, None]).squeeze(1))
            rewards.append(torch.randn(n_agents))
            if (t + 1) % self.detach_gap == 0:
                prev_hid = (prev_hid[0].detach(), prev_hid[1].detach())
        loss = -(torch.stack(log_probs) * torch.stack(rewards)).sum()
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()


trainer = Trainer(CommNetPolicy(5, 8, 4))
for _ in range(2):
    trainer.run_episode()
