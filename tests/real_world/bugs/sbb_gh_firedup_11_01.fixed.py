import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class MLP(nn.Module):
    def __init__(self, layers, activation=torch.tanh, output_activation=None, output_squeeze=False):
        super(MLP, self).__init__()
        self.layers = nn.ModuleList()
        self.activation = activation
        self.output_activation = output_activation
        self.output_squeeze = output_squeeze
        for i, layer in enumerate(layers[1:]):
            self.layers.append(nn.Linear(layers[i], layer))

    def forward(self, input):
        x = input
        for layer in self.layers[:-1]:
            x = self.activation(layer(x))
        if self.output_activation is None:
            x = self.layers[-1](x)
        else:
            x = self.output_activation(self.layers[-1](x))
        return x.squeeze() if self.output_squeeze else x


class ActorCritic(nn.Module):
    def __init__(self, in_features, act_dim, hidden_sizes=(16, 16), activation=torch.relu, output_activation=torch.tanh, action_scale=1.0):
        super(ActorCritic, self).__init__()
        self.action_scale = action_scale
        self.policy = MLP(layers=[in_features] + list(hidden_sizes) + [act_dim], activation=activation, output_activation=output_activation)
        self.q = MLP(layers=[in_features + act_dim] + list(hidden_sizes) + [1], activation=activation, output_squeeze=True)

    def forward(self, x, a):
        pi = self.action_scale * self.policy(x)
        q = self.q(torch.cat((x, a), dim=1))
        q_pi = self.q(torch.cat((x, pi), dim=1))
        return pi, q, q_pi


def ddpg(obs_dim=3, act_dim=1, steps=4, batch_size=8, gamma=0.99, polyak=0.995, pi_lr=1e-3, q_lr=1e-3, seed=0):
    torch.manual_seed(seed)
    np.random.seed(seed)
    main = ActorCritic(in_features=obs_dim, act_dim=act_dim)
    target = ActorCritic(in_features=obs_dim, act_dim=act_dim)
    target.load_state_dict(main.state_dict())
    pi_optimizer = torch.optim.Adam(main.policy.parameters(), lr=pi_lr)
    q_optimizer = torch.optim.Adam(main.q.parameters(), lr=q_lr)

    for t in range(steps):
        obs1, obs2 = torch.randn(batch_size, obs_dim), torch.randn(batch_size, obs_dim)
        acts, rews, done = torch.rand(batch_size, act_dim) * 2 - 1, torch.randn(batch_size), torch.zeros(batch_size)
        _, _, q_pi_targ = target(obs2, acts)

        # Bellman backup for Q function
        backup = (rews + gamma * (1 - done) * q_pi_targ).detach()

        # DDPG losses
        pi, q, q_pi = main(obs1, acts)
        pi_loss = -q_pi.mean()
        q_loss = F.mse_loss(q, backup)

        # Policy update
        pi_optimizer.zero_grad()
        pi_loss.backward()
        pi_optimizer.step()

        # Q-learning update
        q_optimizer.zero_grad()
        q_loss.backward()
        q_optimizer.step()

        # Polyak averaging for target variables
        for p_main, p_target in zip(main.parameters(), target.parameters()):
            p_target.data.copy_(polyak * p_target.data + (1 - polyak) * p_main.data)


ddpg()
