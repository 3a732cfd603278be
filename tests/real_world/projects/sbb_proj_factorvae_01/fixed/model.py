import torch
import torch.nn as nn


class VAE(nn.Module):
    def __init__(self, d=12, z=4):
        super().__init__()
        self.enc = nn.Sequential(nn.Linear(d, 32), nn.ReLU(), nn.Linear(32, 2 * z))
        self.dec = nn.Linear(z, d)

    def forward(self, x):
        mu, logvar = self.enc(x).chunk(2, dim=1)
        z = mu + torch.randn_like(mu) * (0.5 * logvar).exp()
        return self.dec(z), mu, logvar, z


class Discriminator(nn.Module):
    def __init__(self, z=4):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(z, 32), nn.LeakyReLU(0.2), nn.Linear(32, 2))

    def forward(self, z):
        return self.net(z)
