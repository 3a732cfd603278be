import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim

torch.manual_seed(1)


class QNetwork(nn.Module):
    def __init__(self, obs_dim, n_actions):
        super().__init__()
        self.network = nn.Sequential(nn.Linear(obs_dim, 16), nn.ReLU(), nn.Linear(16, 16), nn.ReLU(), nn.Linear(16, n_actions))

    def forward(self, x):
        return self.network(x)


obs_dim, n_actions, gamma, tau = 4, 2, 0.99, 1.0
train_frequency, target_network_frequency = 1, 2
q_network = QNetwork(obs_dim, n_actions)
optimizer = optim.Adam(q_network.parameters(), lr=2.5e-4)
target_network = QNetwork(obs_dim, n_actions)
target_network.load_state_dict(q_network.state_dict())

for global_step in range(4):
    if global_step % train_frequency == 0:
        observations, next_observations = torch.randn(8, obs_dim), torch.randn(8, obs_dim)
        actions, rewards, dones = torch.randint(0, n_actions, (8, 1)), torch.randn(8, 1), torch.zeros(8, 1)
        with torch.no_grad():
            target_max, _ = target_network(next_observations).max(dim=1)
            td_target = rewards.flatten() + gamma * target_max * (1 - dones.flatten())
        old_val = q_network(observations).gather(1, actions).squeeze()
        loss = F.mse_loss(td_target, old_val)

        # optimize the model
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

    # update target network
    if global_step % target_network_frequency == 0:
        for target_network_param, q_network_param in zip(target_network.parameters(), q_network.parameters()):
            target_network_param.data.copy_(tau * q_network_param.data + (1.0 - tau) * target_network_param.data)
