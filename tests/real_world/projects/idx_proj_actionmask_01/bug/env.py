import torch


class MaskedBandit:
    def __init__(self, n_actions=5, obs_dim=6, seed=0):
        self.g = torch.Generator().manual_seed(seed)
        self.n_actions, self.obs_dim = n_actions, obs_dim

    def observe(self, batch):
        obs = torch.randn(batch, self.obs_dim, generator=self.g)
        valid = torch.rand(batch, self.n_actions, generator=self.g) > 0.3
        valid[:, 0] = True
        return obs, valid

    def reward(self, obs, action):
        return (obs[torch.arange(len(action)), action % self.obs_dim] > 0).float()
