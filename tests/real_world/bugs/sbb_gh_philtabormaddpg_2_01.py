import numpy as np
import torch as T
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim

T.manual_seed(0)


class CriticNetwork(nn.Module):
    def __init__(self, beta, input_dims, fc1_dims, fc2_dims, n_agents, n_actions):
        super(CriticNetwork, self).__init__()
        self.fc1 = nn.Linear(input_dims + n_agents * n_actions, fc1_dims)
        self.fc2 = nn.Linear(fc1_dims, fc2_dims)
        self.q = nn.Linear(fc2_dims, 1)
        self.optimizer = optim.Adam(self.parameters(), lr=beta)

    def forward(self, state, action):
        x = F.relu(self.fc1(T.cat([state, action], dim=1)))
        x = F.relu(self.fc2(x))
        return self.q(x)


class ActorNetwork(nn.Module):
    def __init__(self, alpha, input_dims, fc1_dims, fc2_dims, n_actions):
        super(ActorNetwork, self).__init__()
        self.fc1 = nn.Linear(input_dims, fc1_dims)
        self.fc2 = nn.Linear(fc1_dims, fc2_dims)
        self.pi = nn.Linear(fc2_dims, n_actions)
        self.optimizer = optim.Adam(self.parameters(), lr=alpha)

    def forward(self, state):
        x = F.relu(self.fc1(state))
        x = F.relu(self.fc2(x))
        return T.softmax(self.pi(x), dim=1)


class Agent:
    def __init__(self, actor_dims, critic_dims, n_actions, n_agents, agent_idx, alpha=0.01, beta=0.01, fc1=8, fc2=8, gamma=0.95, tau=0.01):
        self.gamma, self.tau, self.n_actions = gamma, tau, n_actions
        self.actor = ActorNetwork(alpha, actor_dims, fc1, fc2, n_actions)
        self.critic = CriticNetwork(beta, critic_dims, fc1, fc2, n_agents, n_actions)
        self.target_actor = ActorNetwork(alpha, actor_dims, fc1, fc2, n_actions)
        self.target_critic = CriticNetwork(beta, critic_dims, fc1, fc2, n_agents, n_actions)
        self.update_network_parameters(tau=1)

    def update_network_parameters(self, tau=None):
        if tau is None:
            tau = self.tau
        target_actor_params = self.target_actor.named_parameters()
        actor_params = self.actor.named_parameters()
        target_actor_state_dict = dict(target_actor_params)
        actor_state_dict = dict(actor_params)
        for name in actor_state_dict:
            actor_state_dict[name] = tau * actor_state_dict[name].clone() + (1 - tau) * target_actor_state_dict[name].clone()
        self.target_actor.load_state_dict(actor_state_dict)

        target_critic_params = self.target_critic.named_parameters()
        critic_params = self.critic.named_parameters()
        target_critic_state_dict = dict(target_critic_params)
        critic_state_dict = dict(critic_params)
        for name in critic_state_dict:
            critic_state_dict[name] = tau * critic_state_dict[name].clone() + (1 - tau) * target_critic_state_dict[name].clone()
        self.target_critic.load_state_dict(critic_state_dict)


class MADDPG:
    def __init__(self, actor_dims, critic_dims, n_agents, n_actions):
        self.agents = [Agent(actor_dims[i], critic_dims, n_actions, n_agents, agent_idx=i) for i in range(n_agents)]
        self.n_agents = n_agents

    def learn(self, memory):
        actor_states, states, actions, rewards, actor_new_states, states_, dones = memory
        states = T.tensor(states, dtype=T.float)
        actions = actions.float()
        rewards = T.tensor(rewards, dtype=T.float)
        states_ = T.tensor(states_, dtype=T.float)
        dones = T.tensor(dones)

        all_agents_new_actions = []
        all_agents_new_mu_actions = []
        old_agents_actions = []

        for agent_idx, agent in enumerate(self.agents):
            new_states = T.tensor(actor_new_states[agent_idx], dtype=T.float)
            new_pi = agent.target_actor.forward(new_states)
            all_agents_new_actions.append(new_pi)
            mu_states = T.tensor(actor_states[agent_idx], dtype=T.float)
            pi = agent.actor.forward(mu_states)
            all_agents_new_mu_actions.append(pi)
            old_agents_actions.append(actions[agent_idx])

        new_actions = T.cat([acts for acts in all_agents_new_actions], dim=1)
        mu = T.cat([acts for acts in all_agents_new_mu_actions], dim=1)
        old_actions = T.cat([acts for acts in old_agents_actions], dim=1)

        for agent_idx, agent in enumerate(self.agents):
            critic_value_ = agent.target_critic.forward(states_, new_actions).flatten()
            critic_value_[dones[:, 0]] = 0.0
            critic_value = agent.critic.forward(states, old_actions).flatten()

            target = rewards[:, agent_idx] + agent.gamma * critic_value_
            critic_loss = F.mse_loss(target, critic_value)
            agent.critic.optimizer.zero_grad()
            critic_loss.backward(retain_graph=True)
            agent.critic.optimizer.step()

            actor_loss = agent.critic.forward(states, mu).flatten()
            actor_loss = -T.mean(actor_loss)
            agent.actor.optimizer.zero_grad()
            actor_loss.backward(retain_graph=True)
            agent.actor.optimizer.step()

            agent.update_network_parameters()


n_agents, n_actions, obs_dim, batch = 2, 2, 3, 4
maddpg_agents = MADDPG([obs_dim] * n_agents, obs_dim * n_agents, n_agents, n_actions)
rng = np.random.RandomState(0)
memory = ([rng.randn(batch, obs_dim) for _ in range(n_agents)], rng.randn(batch, obs_dim * n_agents),
          [rng.rand(batch, n_actions) for _ in range(n_agents)], rng.randn(batch, n_agents),
          [rng.randn(batch, obs_dim) for _ in range(n_agents)], rng.randn(batch, obs_dim * n_agents),
          np.zeros((batch, n_agents), dtype=bool))
memory = (memory[0], memory[1], T.tensor(np.stack(memory[2])), *memory[3:])
maddpg_agents.learn(memory)
