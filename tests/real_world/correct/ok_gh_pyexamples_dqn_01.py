import random
from collections import deque

import numpy as np
import torch as T
import torch.optim as optim
import torch.nn as nn
from torch.autograd import Variable

T.manual_seed(0)
random.seed(0)
np.random.seed(0)


class LinearOutputMLP(nn.Module):
    def __init__(self, input_dim, hidden_structure, output_dim):
        super(LinearOutputMLP, self).__init__()
        all_layers_dim = [input_dim] + hidden_structure
        layers = []

        for idx in range(len(all_layers_dim) - 1):
            n_in = all_layers_dim[idx]
            n_out = all_layers_dim[idx + 1]

            layers.append(nn.Linear(n_in, n_out))
            layers.append(nn.ReLU())
            layers.append(nn.Dropout(0.5))
        layers.append(nn.Linear(n_out, output_dim))

        self.model = nn.Sequential(*layers)

    def forward(self, x):
        return self.model(x)


class QNetwork(object):
    def __init__(self, input_dim, n_actions, replay_len=1000, gamma=0.9, epsilon=0.2, epsilon_decay=0.999, n_samples=8):
        self.input_dim = input_dim
        self.n_actions = n_actions
        self.gamma = gamma
        self.epsilon = epsilon
        self.epsilon_decay = epsilon_decay
        self.n_samples = n_samples

        # the Q network
        self.model = LinearOutputMLP(input_dim, [16, 16], n_actions)
        self.optim = optim.Adam(self.model.parameters(), lr=1e-2)

        self.experience = deque(maxlen=replay_len)

    def get_action(self, state):
        pred = self.model(state)
        if np.random.random() < self.epsilon:
            self.epsilon *= self.epsilon_decay
            return T.from_numpy(np.random.randint(self.n_actions, size=(1, 1)))
        return pred.data.max(1)[1].cpu().view(1, 1)

    def update(self):
        sampled_experience = []
        for _ in range(self.n_samples):
            sampled_experience.append(random.choice(self.experience))

        loss = Variable(T.FloatTensor([0.]), requires_grad=True)
        for state, action, reward, next_state, done in sampled_experience:
            reward = Variable(T.FloatTensor([reward]))
            if done:
                next_q = reward
            else:
                next_q = self.model(next_state).max() + reward
            current_q = self.model(state)[0][action[0][0]]
            loss = loss + (next_q - current_q) ** 2

        loss /= self.n_samples
        self.optim.zero_grad()
        loss.backward()
        self.optim.step()

    def record(self, state, action, reward, next_state, done):
        self.experience.append((state, action, reward, next_state, done))


q_value = QNetwork(4, 2)
state = Variable(T.randn(1, 4))
for time in range(6):
    action = q_value.get_action(state)
    new_state = Variable(T.randn(1, 4))
    q_value.record(state, action, 1.0, new_state, time == 5)
    state = new_state
    q_value.update()
