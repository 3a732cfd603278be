import torch
import torch.nn as nn
import torch.optim as optim
from torch.distributions import Categorical

torch.manual_seed(0)
gamma = 0.99


class Actor(nn.Module):
    def __init__(self, state_size, action_size):
        super(Actor, self).__init__()
        self.fc1 = nn.Linear(state_size, 64)
        self.fc2 = nn.Linear(64, action_size)

    def forward(self, state):
        x = torch.relu(self.fc1(torch.as_tensor(state)))
        action_probs = torch.softmax(self.fc2(x), dim=-1)
        return action_probs


class Critic(nn.Module):
    def __init__(self, state_size):
        super(Critic, self).__init__()
        self.fc1 = nn.Linear(state_size, 64)
        self.fc2 = nn.Linear(64, 1)

    def forward(self, state):
        x = torch.relu(self.fc1(torch.as_tensor(state)))
        value = self.fc2(x)
        return value


def select_action(policy_network, state):
    action_probs = policy_network(state)
    action_dist = Categorical(action_probs)
    action = action_dist.sample()
    log_prob = action_dist.log_prob(action)
    return action.item(), log_prob.reshape(1)


def calculate_losses(critic_network, action_log_prob, reward, state, next_state, done):
    # Critic provides the state value estimates
    value = critic_network(state)
    next_value = critic_network(next_state)
    td_target = (reward + gamma * next_value * (1 - done))
    td_error = td_target - value
    # Apply formulas for actor and critic losses
    actor_loss = -action_log_prob * td_error.detach()
    critic_loss = td_error ** 2
    return actor_loss, critic_loss


actor = Actor(8, 4)
critic = Critic(8)
actor_optimizer = optim.Adam(actor.parameters(), lr=0.001)
critic_optimizer = optim.Adam(critic.parameters(), lr=0.001)

for episode in range(3):
    state = torch.randn(8)
    done = False
    step = 0
    while not done:
        # Select action
        action, action_log_prob = select_action(actor, state)
        next_state, reward = torch.randn(8), float(torch.randn(()))
        step += 1
        done = step >= 4
        # Calculate losses
        actor_loss, critic_loss = calculate_losses(critic, action_log_prob, reward, state, next_state, done)
        # Update actor
        actor_optimizer.zero_grad(); actor_loss.backward(); actor_optimizer.step()
        # Update critic
        critic_optimizer.zero_grad(); critic_loss.backward(); critic_optimizer.step()
        state = next_state
