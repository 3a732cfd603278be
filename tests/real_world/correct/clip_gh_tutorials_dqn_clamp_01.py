import random
from collections import namedtuple

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim

torch.manual_seed(0)
random.seed(0)
Transition = namedtuple('Transition', ('state', 'action', 'next_state', 'reward'))


class DQN(nn.Module):
    def __init__(self, h, w, outputs):
        super(DQN, self).__init__()
        self.conv1 = nn.Conv2d(3, 4, kernel_size=3, stride=2)
        self.bn1 = nn.BatchNorm2d(4)
        self.head = nn.Linear(4 * ((h - 3) // 2 + 1) * ((w - 3) // 2 + 1), outputs)

    def forward(self, x):
        x = F.relu(self.bn1(self.conv1(x)))
        return self.head(x.view(x.size(0), -1))


BATCH_SIZE, GAMMA = 3, 0.999
policy_net = DQN(9, 9, 2)
target_net = DQN(9, 9, 2)
target_net.load_state_dict(policy_net.state_dict())
target_net.eval()
optimizer = optim.RMSprop(policy_net.parameters())
memory = []


def optimize_model():
    if len(memory) < BATCH_SIZE:
        return
    transitions = random.sample(memory, BATCH_SIZE)
    batch = Transition(*zip(*transitions))
    non_final_mask = torch.tensor(tuple(map(lambda s: s is not None, batch.next_state)), dtype=torch.bool)
    non_final_next_states = torch.cat([s for s in batch.next_state if s is not None])
    state_batch = torch.cat(batch.state)
    action_batch = torch.cat(batch.action)
    reward_batch = torch.cat(batch.reward)
    state_action_values = policy_net(state_batch).gather(1, action_batch)
    next_state_values = torch.zeros(BATCH_SIZE)
    next_state_values[non_final_mask] = target_net(non_final_next_states).max(1)[0].detach()
    expected_state_action_values = (next_state_values * GAMMA) + reward_batch
    loss = F.smooth_l1_loss(state_action_values, expected_state_action_values.unsqueeze(1))
    optimizer.zero_grad()
    loss.backward()
    for param in policy_net.parameters():
        param.grad.data.clamp_(-1, 1)
    optimizer.step()


for t in range(6):
    state = torch.randn(1, 3, 9, 9)
    next_state = None if t == 4 else torch.randn(1, 3, 9, 9)
    memory.append(Transition(state, torch.tensor([[random.randrange(2)]]), next_state, torch.tensor([1.0])))
    optimize_model()
