import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

OBS_DIM, N_ACTIONS = 4, 3


class ValueFunction(nn.Module):
    """V(s) or Q(s, a): forward pass, MSE loss and a plain SGD step, optimised at every time step."""

    def __init__(self, in_dim, lr=1e-2):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(in_dim, 16), nn.Tanh(), nn.Linear(16, 1))
        self.optimizer = torch.optim.SGD(self.parameters(), lr=lr)

    def forward(self, x):
        return self.net(x)

    def mse_loss(self, prediction, target):
        return ((prediction - target) ** 2).mean()

    def sgd(self, loss):
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()


class PolicyNetwork(nn.Module):
    def __init__(self, obs_dim, n_actions, epsilon=0.2, lr=1e-3):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(obs_dim, 16), nn.Tanh(), nn.Linear(16, n_actions))
        self.epsilon = epsilon
        self.optimizer = torch.optim.Adam(self.parameters(), lr=lr)

    def forward(self, state):
        return F.softmax(self.net(state), dim=-1)

    def clipped_surrogate(self, state, action, old_prob, advantage):
        prob = self(state)[action]
        ratio = prob / old_prob
        return torch.min(ratio * advantage, torch.clamp(ratio, 1 - self.epsilon, 1 + self.epsilon) * advantage)

    def sga(self, surrogates):
        # stochastic gradient ascent on the expected clipped surrogate
        self.optimizer.zero_grad()
        objective = -torch.stack(surrogates).mean()
        objective.backward()
        self.optimizer.step()


def run_episode(policy, V, Q, steps=5, gamma=0.99):
    surrogates = []
    state = torch.randn(OBS_DIM)
    for t in range(steps):
        with torch.no_grad():
            probs = policy(state)
        action = torch.multinomial(probs, 1).item()
        next_state, reward = torch.randn(OBS_DIM), torch.randn(())
        one_hot = F.one_hot(torch.tensor(action), N_ACTIONS).float()

        v = V(state)
        q = Q(torch.cat([state, one_hot]))
        with torch.no_grad():
            target = reward + gamma * V(next_state)
        V.sgd(V.mse_loss(v, target))
        Q.sgd(Q.mse_loss(q, target))

        advantage = (v - q).detach()
        surrogates.append(policy.clipped_surrogate(state, action, probs[action], advantage).squeeze())
        state = next_state
    policy.sga(surrogates)


policy = PolicyNetwork(OBS_DIM, N_ACTIONS)
V = ValueFunction(OBS_DIM)
Q = ValueFunction(OBS_DIM + N_ACTIONS)
for episode in range(2):
    run_episode(policy, V, Q)
