import torch

from modules.critic import Critic
from modules.actor import Actor
from learners.returns import advantages_from


class PPOLearner:
    def __init__(self, obs_dim=8, n_actions=4, mini_epochs=2, clip=0.2):
        self.actor, self.critic = Actor(obs_dim, n_actions), Critic(obs_dim)
        self.opt = torch.optim.Adam([*self.actor.parameters(), *self.critic.parameters()], lr=3e-4)
        self.mini_epochs, self.clip = mini_epochs, clip

    def train(self, batch):
        values = self.critic(batch["obs"]).squeeze(-1)
        advantages = advantages_from(batch["rewards"], values)
        for _ in range(self.mini_epochs):
            logp = self.actor.log_prob(batch["obs"], batch["actions"])
            ratio = torch.exp(logp - batch["old_logp"])
            surr = torch.min(ratio * advantages, ratio.clamp(1 - self.clip, 1 + self.clip) * advantages)
            critic_loss = ((self.critic(batch["obs"]).squeeze(-1) - batch["returns"]) ** 2).mean()
            loss = -surr.mean() + 0.5 * critic_loss
            self.opt.zero_grad()
            loss.backward()
            self.opt.step()
        return loss.item()
