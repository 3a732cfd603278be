import torch
from torch import nn

torch.manual_seed(0)


class FlattenMlp(nn.Module):
    def __init__(self, input_size, output_size):
        super().__init__()
        self.fc = nn.Linear(input_size, 16)
        self.last_fc = nn.Linear(16, output_size)

    def forward(self, *inputs):
        flat_inputs = torch.cat(inputs, dim=1)
        return self.last_fc(torch.relu(self.fc(flat_inputs)))


class TanhGaussianPolicy(nn.Module):
    def __init__(self, obs_dim, action_dim):
        super().__init__()
        self.fc = nn.Linear(obs_dim, 16)
        self.mean = nn.Linear(16, action_dim)
        self.log_std = nn.Linear(16, action_dim)

    def forward(self, obs, reparameterize=True, return_log_prob=True):
        h = torch.relu(self.fc(obs))
        mean, log_std = self.mean(h), self.log_std(h).clamp(-20, 2)
        std = log_std.exp()
        pre_tanh = mean + std * torch.randn_like(mean)
        action = torch.tanh(pre_tanh)
        log_prob = (-((pre_tanh - mean) ** 2) / (2 * std ** 2) - log_std).sum(1, keepdim=True)
        log_prob = log_prob - torch.log(1 - action ** 2 + 1e-6).sum(1, keepdim=True)
        return action, mean, log_std, log_prob


class SACTrainer(object):
    def __init__(self, policy, qf1, qf2, target_qf1, target_qf2, discount=0.99, reward_scale=1.0):
        self.policy, self.qf1, self.qf2 = policy, qf1, qf2
        self.target_qf1, self.target_qf2 = target_qf1, target_qf2
        self.discount, self.reward_scale = discount, reward_scale
        self.qf_criterion = nn.MSELoss()
        self.policy_optimizer = torch.optim.Adam(self.policy.parameters(), lr=3e-4)
        self.qf1_optimizer = torch.optim.Adam(self.qf1.parameters(), lr=3e-4)
        self.qf2_optimizer = torch.optim.Adam(self.qf2.parameters(), lr=3e-4)

    def train_from_torch(self, batch):
        rewards = batch['rewards']
        terminals = batch['terminals']
        obs = batch['observations']
        actions = batch['actions']
        next_obs = batch['next_observations']

        """
        Policy and Alpha Loss
        """
        new_obs_actions, policy_mean, policy_log_std, log_pi = self.policy(obs)
        alpha = 1
        q_new_actions = torch.min(
            self.qf1(obs, new_obs_actions),
            self.qf2(obs, new_obs_actions),
        )
        policy_loss = (alpha * log_pi - q_new_actions).mean()

        """
        QF Loss
        """
        q1_pred = self.qf1(obs, actions)
        q2_pred = self.qf2(obs, actions)
        new_next_actions, _, _, new_log_pi = self.policy(next_obs)
        target_q_values = torch.min(
            self.target_qf1(next_obs, new_next_actions),
            self.target_qf2(next_obs, new_next_actions),
        ) - alpha * new_log_pi

        q_target = self.reward_scale * rewards + (1. - terminals) * self.discount * target_q_values
        qf1_loss = self.qf_criterion(q1_pred, q_target.detach())
        qf2_loss = self.qf_criterion(q2_pred, q_target.detach())

        """
        Update networks
        """
        self.policy_optimizer.zero_grad()
        policy_loss.backward()
        self.policy_optimizer.step()

        self.qf1_optimizer.zero_grad()
        qf1_loss.backward()
        self.qf1_optimizer.step()

        self.qf2_optimizer.zero_grad()
        qf2_loss.backward()
        self.qf2_optimizer.step()


obs_dim, action_dim = 3, 2
trainer = SACTrainer(
    policy=TanhGaussianPolicy(obs_dim, action_dim),
    qf1=FlattenMlp(obs_dim + action_dim, 1), qf2=FlattenMlp(obs_dim + action_dim, 1),
    target_qf1=FlattenMlp(obs_dim + action_dim, 1), target_qf2=FlattenMlp(obs_dim + action_dim, 1),
)
for _ in range(2):
    batch = dict(rewards=torch.randn(8, 1), terminals=torch.zeros(8, 1), observations=torch.randn(8, obs_dim),
                 actions=torch.rand(8, action_dim) * 2 - 1, next_observations=torch.randn(8, obs_dim))
    trainer.train_from_torch(batch)
