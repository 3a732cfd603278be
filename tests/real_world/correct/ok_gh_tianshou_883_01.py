import torch
import torch.nn as nn
from torch.distributions import Categorical

torch.manual_seed(0)


class Batch(dict):
    __getattr__ = dict.__getitem__
    __setattr__ = dict.__setitem__


class PPOPolicy(nn.Module):
    def __init__(self, obs_dim, n_actions, eps_clip=0.2):
        super().__init__()
        self.actor = nn.Sequential(nn.Linear(obs_dim, 16), nn.Tanh(), nn.Linear(16, n_actions))
        self.optim = torch.optim.Adam(self.actor.parameters(), lr=1e-3)
        self.eps_clip = eps_clip

    def forward(self, batch):
        return Categorical(logits=self.actor(batch.obs))

    def process_fn(self, batch):
        with torch.no_grad():
            batch.logp_old = self(batch).log_prob(batch.act)
        return batch

    def learn(self, batch, repeat=3, batch_size=4):
        for _ in range(repeat):
            for idx in torch.randperm(len(batch.act)).split(batch_size):
                minibatch = Batch(obs=batch.obs[idx], act=batch.act[idx], adv=batch.adv[idx], logp_old=batch.logp_old[idx])
                ratio = (self(minibatch).log_prob(minibatch.act) - minibatch.logp_old).exp()
                surr1 = ratio * minibatch.adv
                surr2 = ratio.clamp(1.0 - self.eps_clip, 1.0 + self.eps_clip) * minibatch.adv
                loss = -torch.min(surr1, surr2).mean()
                self.optim.zero_grad()
                loss.backward()
                self.optim.step()


policy = PPOPolicy(4, 2)
batch = Batch(obs=torch.randn(12, 4), act=torch.randint(0, 2, (12,)), adv=torch.randn(12))
policy.learn(policy.process_fn(batch))
