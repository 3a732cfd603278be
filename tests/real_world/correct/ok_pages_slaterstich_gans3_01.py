import torch
import torch.nn as nn

torch.manual_seed(0)


class WGAN:
    def __init__(self, latent_dim=8, data_dim=16, n_critic=5, clip=0.04):
        self.latent_dim = latent_dim
        self.n_critic = n_critic
        self.clip = clip
        self.G = nn.Sequential(nn.Linear(latent_dim, 32), nn.ReLU(), nn.Linear(32, data_dim), nn.Tanh())
        self.D = nn.Sequential(nn.Linear(data_dim, 32), nn.LeakyReLU(0.2), nn.Linear(32, 1))
        self.opt_G = torch.optim.RMSprop(self.G.parameters(), lr=5e-5)
        self.opt_D = torch.optim.RMSprop(self.D.parameters(), lr=5e-5)

    def train_D(self, real):
        for _ in range(self.n_critic):
            z = torch.randn(real.size(0), self.latent_dim)
            fake = self.G(z).detach()
            self.opt_D.zero_grad()
            loss_D = -(self.D(real).mean() - self.D(fake).mean())
            loss_D.backward()
            self.opt_D.step()
            for p in self.D.parameters():
                p.data.clamp_(-self.clip, self.clip)
        return loss_D.item()

    def train_G(self, batch_size):
        z = torch.randn(batch_size, self.latent_dim)
        self.opt_G.zero_grad()
        loss_G = -self.D(self.G(z)).mean()
        loss_G.backward()
        self.opt_G.step()
        return loss_G.item()


gan = WGAN()
for epoch in range(2):
    real = torch.rand(8, 16) * 2 - 1
    d_loss = gan.train_D(real)
    g_loss = gan.train_G(8)
