import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class ActorCritic(nn.Module):
    def __init__(self, obs_dim=4, n_actions=2):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(obs_dim, 32), nn.ELU())
        self.lstm = nn.LSTMCell(32, 32)
        self.critic_linear = nn.Linear(32, 1)
        self.actor_linear = nn.Linear(32, n_actions)

    def forward(self, x, hx, cx):
        hx, cx = self.lstm(self.body(x), (hx, cx))
        return self.critic_linear(hx), self.actor_linear(hx), (hx, cx)


def train_rollout(model, optimizer, num_steps=5, gamma=0.99, gae_lambda=1.0, entropy_coef=0.01):
    hx, cx = torch.zeros(1, 32), torch.zeros(1, 32)
    values, log_probs, rewards, entropies = [], [], [], []
    for step in range(num_steps):
        value, logit, (hx, cx) = model(torch.randn(1, 4), hx, cx)
        prob, log_prob = F.softmax(logit, -1), F.log_softmax(logit, -1)
        entropies.append(-(log_prob * prob).sum(1))
        action = prob.multinomial(num_samples=1).detach()
        log_probs.append(log_prob.gather(1, action))
        values.append(value)
        rewards.append(float(action.item()))
    R = torch.zeros(1, 1)
    values.append(R)
    policy_loss, value_loss, gae = 0, 0, torch.zeros(1, 1)
    for i in reversed(range(len(rewards))):
        R = gamma * R + rewards[i]
        advantage = R - values[i]
        value_loss = value_loss + 0.5 * advantage.pow(2)
        delta_t = rewards[i] + gamma * values[i + 1] - values[i]
        gae = gae * gamma * gae_lambda + delta_t
        policy_loss = policy_loss - log_probs[i] * gae.detach() - entropy_coef * entropies[i]
    optimizer.zero_grad()
    (policy_loss + 0.5 * value_loss).sum().backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 50)
    optimizer.step()


model = ActorCritic()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
for _ in range(2):
    train_rollout(model, optimizer)
