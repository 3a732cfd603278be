from collections import namedtuple

import numpy as np
import torch as th
from torch import nn
from torch.nn import functional as F

th.manual_seed(0)
RolloutBufferSamples = namedtuple("RolloutBufferSamples", ["observations", "actions", "old_values", "old_log_prob", "advantages", "returns"])


class ActorCriticPolicy(nn.Module):
    def __init__(self, obs_dim=4, n_actions=2):
        super().__init__()
        self.mlp_extractor = nn.Sequential(nn.Linear(obs_dim, 16), nn.Tanh())
        self.action_net = nn.Linear(16, n_actions)
        self.value_net = nn.Linear(16, 1)
        self.optimizer = th.optim.Adam(self.parameters(), lr=3e-4, eps=1e-5)

    def evaluate_actions(self, obs, actions):
        latent = self.mlp_extractor(obs)
        distribution = th.distributions.Categorical(logits=self.action_net(latent))
        return self.value_net(latent), distribution.log_prob(actions), distribution.entropy()


class PPO:
    def __init__(self, policy, n_epochs=2, batch_size=4, clip_range=0.2, clip_range_vf=None, ent_coef=0.0, vf_coef=0.5,
                 max_grad_norm=0.5, target_kl=None, normalize_advantage=True):
        self.policy = policy
        self.n_epochs, self.batch_size = n_epochs, batch_size
        self.clip_range, self.clip_range_vf = clip_range, clip_range_vf
        self.ent_coef, self.vf_coef, self.max_grad_norm = ent_coef, vf_coef, max_grad_norm
        self.target_kl, self.normalize_advantage = target_kl, normalize_advantage
        self._n_updates = 0

    def rollout_buffer_get(self, batch_size):
        n = 8
        obs = th.randn(n, 4)
        with th.no_grad():
            acts = th.randint(0, 2, (n,))
            values, log_prob, _ = self.policy.evaluate_actions(obs, acts)
        advantages, returns = th.randn(n), th.randn(n)
        for start in range(0, n, batch_size):
            sl = slice(start, start + batch_size)
            yield RolloutBufferSamples(obs[sl], acts[sl], values.flatten()[sl], log_prob[sl], advantages[sl], returns[sl])

    def train(self) -> None:
        clip_range = self.clip_range
        entropy_losses, pg_losses, value_losses, clip_fractions = [], [], [], []
        continue_training = True
        for epoch in range(self.n_epochs):
            approx_kl_divs = []
            for rollout_data in self.rollout_buffer_get(self.batch_size):
                actions = rollout_data.actions.long().flatten()
                values, log_prob, entropy = self.policy.evaluate_actions(rollout_data.observations, actions)
                values = values.flatten()
                # Normalize advantage
                advantages = rollout_data.advantages
                if self.normalize_advantage and len(advantages) > 1:
                    advantages = (advantages - advantages.mean()) / (advantages.std() + 1e-8)

                # ratio between old and new policy, should be one at the first iteration
                ratio = th.exp(log_prob - rollout_data.old_log_prob)

                # clipped surrogate loss
                policy_loss_1 = advantages * ratio
                policy_loss_2 = advantages * th.clamp(ratio, 1 - clip_range, 1 + clip_range)
                policy_loss = -th.min(policy_loss_1, policy_loss_2).mean()

                # Logging
                pg_losses.append(policy_loss.item())
                clip_fraction = th.mean((th.abs(ratio - 1) > clip_range).float()).item()
                clip_fractions.append(clip_fraction)

                values_pred = values
                # Value loss using the TD(gae_lambda) target
                value_loss = F.mse_loss(rollout_data.returns, values_pred)
                value_losses.append(value_loss.item())

                entropy_loss = -th.mean(entropy)
                entropy_losses.append(entropy_loss.item())

                loss = policy_loss + self.ent_coef * entropy_loss + self.vf_coef * value_loss

                with th.no_grad():
                    log_ratio = log_prob - rollout_data.old_log_prob
                    approx_kl_div = th.mean((th.exp(log_ratio) - 1) - log_ratio).cpu().numpy()
                    approx_kl_divs.append(approx_kl_div)

                if self.target_kl is not None and approx_kl_div > 1.5 * self.target_kl:
                    continue_training = False
                    break

                # Optimization step
                self.policy.optimizer.zero_grad()
                loss.backward()
                # Clip grad norm
                th.nn.utils.clip_grad_norm_(self.policy.parameters(), self.max_grad_norm)
                self.policy.optimizer.step()

            self._n_updates += 1
            if not continue_training:
                break


PPO(ActorCriticPolicy()).train()
