import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Actor(nn.Module):
    def __init__(self, obs_dim, action_dim):
        super(Actor, self).__init__()
        self.fc1 = nn.Linear(obs_dim, 16)
        self.action_out = nn.Linear(16, action_dim)

    def forward(self, x):
        x = F.relu(self.fc1(x))
        return torch.tanh(self.action_out(x))


class Critic(nn.Module):
    def __init__(self, obs_dim, action_dim, n_agents):
        super(Critic, self).__init__()
        self.fc1 = nn.Linear((obs_dim + action_dim) * n_agents, 16)
        self.q_out = nn.Linear(16, 1)

    def forward(self, state, action):
        x = torch.cat(state + action, dim=1)
        x = F.relu(self.fc1(x))
        return self.q_out(x)


class MADDPG:
    def __init__(self, agent_id, n_agents=2, obs_dim=4, action_dim=2, gamma=0.95):
        self.agent_id, self.gamma = agent_id, gamma
        self.actor_network = Actor(obs_dim, action_dim)
        self.critic_network = Critic(obs_dim, action_dim, n_agents)
        self.actor_target_network = Actor(obs_dim, action_dim)
        self.critic_target_network = Critic(obs_dim, action_dim, n_agents)
        self.actor_optim = torch.optim.Adam(self.actor_network.parameters(), lr=1e-3)
        self.critic_optim = torch.optim.Adam(self.critic_network.parameters(), lr=1e-3)

    # update the network
    def train(self, transitions, other_agents):
        r = transitions['r_%d' % self.agent_id]
        o, u, o_next = [], [], []
        for agent_id in range(2):
            o.append(transitions['o_%d' % agent_id])
            u.append(transitions['u_%d' % agent_id])
            o_next.append(transitions['o_next_%d' % agent_id])

        # calculate the target Q value function
        u_next = []
        with torch.no_grad():
            for agent_id in range(2):
                if agent_id == self.agent_id:
                    u_next.append(self.actor_target_network(o_next[agent_id]))
                else:
                    u_next.append(other_agents[0].actor_target_network(o_next[agent_id]))
            q_next = self.critic_target_network(o_next, u_next).detach()
            target_q = (r.unsqueeze(1) + self.gamma * q_next).detach()

        # the q loss
        q_value = self.critic_network(o, u)
        critic_loss = (target_q - q_value).pow(2).mean()

        # the actor loss
        u[self.agent_id] = self.actor_network(o[self.agent_id])
        actor_loss = - self.critic_network(o, u).mean()

        # update the network: critic first, then actor (as in the paper)
        self.critic_optim.zero_grad()
        critic_loss.backward()
        self.critic_optim.step()

        self.actor_optim.zero_grad()
        actor_loss.backward()
        self.actor_optim.step()


agents = [MADDPG(0), MADDPG(1)]
transitions = {}
for i in range(2):
    transitions['o_%d' % i] = torch.randn(8, 4)
    transitions['u_%d' % i] = torch.randn(8, 2)
    transitions['o_next_%d' % i] = torch.randn(8, 4)
    transitions['r_%d' % i] = torch.randn(8)
agents[0].train(transitions, [agents[1]])
