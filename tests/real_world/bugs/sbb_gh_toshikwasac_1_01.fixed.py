import torch
import torch.nn as nn
from torch.optim import Adam
from torch.distributions import Normal

torch.manual_seed(0)


def update_params(optim, network, loss, grad_clip=None, retain_graph=False):
    optim.zero_grad()
    loss.backward(retain_graph=retain_graph)
    if grad_clip is not None:
        for p in network.modules():
            torch.nn.utils.clip_grad_norm_(p.parameters(), grad_clip)
    optim.step()


class QNetwork(nn.Module):
    def __init__(self, num_inputs, num_actions, hidden_units=(16, 16)):
        super(QNetwork, self).__init__()
        self.Q = nn.Sequential(nn.Linear(num_inputs + num_actions, hidden_units[0]), nn.ReLU(), nn.Linear(hidden_units[0], 1))

    def forward(self, x):
        return self.Q(x)


class TwinnedQNetwork(nn.Module):
    def __init__(self, num_inputs, num_actions):
        super(TwinnedQNetwork, self).__init__()
        self.Q1 = QNetwork(num_inputs, num_actions)
        self.Q2 = QNetwork(num_inputs, num_actions)

    def forward(self, states, actions):
        x = torch.cat([states, actions], dim=1)
        return self.Q1(x), self.Q2(x)


class GaussianPolicy(nn.Module):
    def __init__(self, num_inputs, num_actions):
        super(GaussianPolicy, self).__init__()
        self.policy = nn.Sequential(nn.Linear(num_inputs, 16), nn.ReLU(), nn.Linear(16, 2 * num_actions))

    def sample(self, states):
        means, log_stds = torch.chunk(self.policy(states), 2, dim=-1)
        normals = Normal(means, log_stds.clamp(-20, 2).exp())
        xs = normals.rsample()
        actions = torch.tanh(xs)
        log_probs = normals.log_prob(xs) - torch.log(1 - actions.pow(2) + 1e-6)
        entropies = -log_probs.sum(dim=1, keepdim=True)
        return actions, entropies, torch.tanh(means)


class SacAgent:
    def __init__(self, num_inputs=3, num_actions=1, gamma=0.99, grad_clip=None):
        self.policy = GaussianPolicy(num_inputs, num_actions)
        self.critic = TwinnedQNetwork(num_inputs, num_actions)
        self.critic_target = TwinnedQNetwork(num_inputs, num_actions).eval()
        self.critic_target.load_state_dict(self.critic.state_dict())
        self.policy_optim = Adam(self.policy.parameters(), lr=3e-4)
        self.q1_optim = Adam(self.critic.Q1.parameters(), lr=3e-4)
        self.q2_optim = Adam(self.critic.Q2.parameters(), lr=3e-4)
        self.target_entropy = -float(num_actions)
        self.log_alpha = torch.zeros(1, requires_grad=True)
        self.alpha = self.log_alpha.exp()
        self.alpha_optim = Adam([self.log_alpha], lr=3e-4)
        self.gamma, self.grad_clip, self.entropy_tuning = gamma, grad_clip, True

    def calc_current_q(self, states, actions, rewards, next_states, dones):
        return self.critic(states, actions)

    def calc_target_q(self, states, actions, rewards, next_states, dones):
        with torch.no_grad():
            next_actions, next_entropies, _ = self.policy.sample(next_states)
            next_q1, next_q2 = self.critic_target(next_states, next_actions)
            next_q = torch.min(next_q1, next_q2) + self.alpha * next_entropies
        return rewards + (1.0 - dones) * self.gamma * next_q

    def calc_critic_loss(self, batch, weights):
        curr_q1, curr_q2 = self.calc_current_q(*batch)
        target_q = self.calc_target_q(*batch)
        errors = torch.abs(curr_q1.detach() - target_q)
        mean_q1 = curr_q1.detach().mean().item()
        mean_q2 = curr_q2.detach().mean().item()
        q1_loss = torch.mean((curr_q1 - target_q).pow(2) * weights)
        q2_loss = torch.mean((curr_q2 - target_q).pow(2) * weights)
        return q1_loss, q2_loss, errors, mean_q1, mean_q2

    def calc_policy_loss(self, batch, weights):
        states, actions, rewards, next_states, dones = batch
        # We re-sample actions to calculate expectations of Q.
        sampled_action, entropy, _ = self.policy.sample(states)
        # expectations of Q with clipped double Q technique
        q1, q2 = self.critic(states, sampled_action)
        q = torch.min(q1, q2)
        # Policy objective is maximization of (Q + alpha * entropy) with
        # priority weights.
        policy_loss = torch.mean((- q - self.alpha * entropy) * weights)
        return policy_loss, entropy

    def calc_entropy_loss(self, entropy, weights):
        entropy_loss = -torch.mean(self.log_alpha * (self.target_entropy - entropy).detach() * weights)
        return entropy_loss

    def learn(self, batch):
        weights = 1.
        q1_loss, q2_loss, errors, mean_q1, mean_q2 = self.calc_critic_loss(batch, weights)
        # policy_loss, entropies = self.calc_policy_loss(batch, weights)

        update_params(self.q1_optim, self.critic.Q1, q1_loss, self.grad_clip)
        update_params(self.q2_optim, self.critic.Q2, q2_loss, self.grad_clip)

        # calculate `policy_loss` after updating `Q1、Q2`
        policy_loss, entropies = self.calc_policy_loss(batch, weights)
        update_params(self.policy_optim, self.policy, policy_loss, self.grad_clip)

        if self.entropy_tuning:
            entropy_loss = self.calc_entropy_loss(entropies, weights)
            update_params(self.alpha_optim, None, entropy_loss)
            self.alpha = self.log_alpha.exp()


agent = SacAgent()
for _ in range(2):
    batch = (torch.randn(8, 3), torch.rand(8, 1) * 2 - 1, torch.randn(8, 1), torch.randn(8, 3), torch.zeros(8, 1))
    agent.learn(batch)
