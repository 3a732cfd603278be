import torch
from torch import nn


class GAN:
    def __init__(self):
        self.G = nn.Sequential(nn.Linear(2, 8), nn.Tanh(), nn.Linear(8, 2))
        self.D = nn.Sequential(nn.Linear(2, 8), nn.LeakyReLU(0.2), nn.Linear(8, 1))
        self.opt_g = torch.optim.Adam(self.G.parameters(), lr=1e-3)
        self.opt_d = torch.optim.Adam(self.D.parameters(), lr=1e-3)
        self.bce = nn.BCEWithLogitsLoss()

    def train_step(self, real):
        fake = self.G(torch.randn(real.size(0), 2))
        d_loss = self.bce(self.D(real), torch.ones(real.size(0), 1)) + \
            self.bce(self.D(fake), torch.zeros(real.size(0), 1))
        self.opt_d.zero_grad()
        d_loss.backward()
        g_loss = self.bce(self.D(fake), torch.ones(real.size(0), 1))
        self.opt_g.zero_grad()
        g_loss.backward()  # <- GG404
        self.opt_d.step()
        self.opt_g.step()


torch.manual_seed(0)
GAN().train_step(torch.randn(4, 2))
