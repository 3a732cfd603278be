import torch
import torch.nn as nn

torch.manual_seed(0)


class AttrDict(dict):
    __getattr__ = dict.__getitem__


class SACAgent:
    def __init__(self, obs_dim=4, act_dim=2, discount_factor=0.99, reward_scale=1.0, target_network_update_factor=5e-3):
        self.policy = nn.Sequential(nn.Linear(obs_dim, 16), nn.ReLU(), nn.Linear(16, 2 * act_dim))
        self.critics = [nn.Sequential(nn.Linear(obs_dim + act_dim, 16), nn.ReLU(), nn.Linear(16, 1)) for _ in range(2)]
        self.critic_targets = [nn.Sequential(nn.Linear(obs_dim + act_dim, 16), nn.ReLU(), nn.Linear(16, 1)) for _ in range(2)]
        for t, c in zip(self.critic_targets, self.critics):
            t.load_state_dict(c.state_dict())
        self.policy_opt = torch.optim.Adam(self.policy.parameters(), lr=3e-4)
        self.critic_opts = [torch.optim.Adam(c.parameters(), lr=3e-4) for c in self.critics]
        self._log_alpha = torch.zeros(1, requires_grad=True)
        self.alpha_opt = torch.optim.Adam([self._log_alpha], lr=3e-4)
        self.target_entropy = -float(act_dim)
        self._hp = AttrDict(discount_factor=discount_factor, reward_scale=reward_scale, target_network_update_factor=target_network_update_factor)

    @property
    def alpha(self):
        return self._log_alpha.exp()

    def _run_policy(self, obs):
        mean, log_std = self.policy(obs).chunk(2, -1)
        dist = torch.distributions.Normal(mean, log_std.clamp(-5, 2).exp())
        action = dist.rsample()
        return AttrDict(action=action, log_prob=dist.log_prob(action).sum(-1))

    def _perform_update(self, loss, opt, network):
        opt.zero_grad()
        loss.backward()
        opt.step()

    def _update_alpha(self, experience_batch, policy_output):
        alpha_loss = (-self._log_alpha * (policy_output.log_prob + self.target_entropy).detach()).mean()
        self._perform_update(alpha_loss, self.alpha_opt, None)
        return alpha_loss

    def _compute_policy_loss(self, experience_batch, policy_output):
        q_est = torch.min(*[critic(torch.cat([experience_batch.observation, policy_output.action], -1))
                            for critic in self.critics])
        policy_loss = -1 * q_est.squeeze(-1) + self.alpha.detach() * policy_output.log_prob
        return policy_loss.mean()

    def _compute_next_value(self, experience_batch, policy_output):
        q_next = torch.min(*[critic_target(torch.cat([experience_batch.observation_next, policy_output.action], -1))
                             for critic_target in self.critic_targets])
        return q_next.squeeze(-1) - self.alpha.detach() * policy_output.log_prob

    def _compute_critic_loss(self, experience_batch, q_target):
        qs = [critic(torch.cat([experience_batch.observation, experience_batch.action], -1)).squeeze(-1) for critic in self.critics]
        critic_losses = [0.5 * (q - q_target).pow(2).mean() for q in qs]
        return critic_losses, qs

    def _soft_update_target_network(self, target, source):
        for target_param, param in zip(target.parameters(), source.parameters()):
            target_param.data.copy_(target_param.data * (1.0 - self._hp.target_network_update_factor) +
                                    param.data * self._hp.target_network_update_factor)

    def update(self, experience_batch):
        # compute policy loss
        policy_output = self._run_policy(experience_batch.observation)

        # update alpha
        alpha_loss = self._update_alpha(experience_batch, policy_output)

        # compute policy loss
        policy_loss = self._compute_policy_loss(experience_batch, policy_output)

        # compute target Q value
        with torch.no_grad():
            policy_output_next = self._run_policy(experience_batch.observation_next)
            value_next = self._compute_next_value(experience_batch, policy_output_next)
            q_target = experience_batch.reward * self._hp.reward_scale + \
                (1 - experience_batch.done) * self._hp.discount_factor * value_next
            q_target = q_target.detach()

        # compute critic loss
        critic_losses, qs = self._compute_critic_loss(experience_batch, q_target)

        # update critic networks
        [self._perform_update(critic_loss, critic_opt, critic)
         for critic_loss, critic_opt, critic in zip(critic_losses, self.critic_opts, self.critics)]

        # update target networks
        [self._soft_update_target_network(critic_target, critic)
         for critic_target, critic in zip(self.critic_targets, self.critics)]

        # update policy network on policy loss
        self._perform_update(policy_loss, self.policy_opt, self.policy)


agent = SACAgent()
batch = AttrDict(observation=torch.randn(8, 4), observation_next=torch.randn(8, 4), action=torch.rand(8, 2) * 2 - 1,
                 reward=torch.randn(8), done=torch.zeros(8))
agent.update(batch)
