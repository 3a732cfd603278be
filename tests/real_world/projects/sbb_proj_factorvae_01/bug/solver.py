import torch
import torch.nn.functional as F

from ops import kl_divergence, permute_dims


class Solver:
    def __init__(self, vae, disc, gamma=6.0):
        self.vae, self.D, self.gamma = vae, disc, gamma
        self.optim_VAE = torch.optim.Adam(vae.parameters(), lr=1e-3)
        self.optim_D = torch.optim.Adam(disc.parameters(), lr=1e-3)

    def step(self, x1, x2):
        recon, mu, logvar, z = self.vae(x1)
        D_z = self.D(z)
        tc = (D_z[:, 0] - D_z[:, 1]).mean()
        vae_loss = F.mse_loss(recon, x1) + kl_divergence(mu, logvar) + self.gamma * tc
        self.optim_VAE.zero_grad()
        vae_loss.backward(retain_graph=True)
        self.optim_VAE.step()

        _, _, _, z2 = self.vae(x2)
        D_z_pperm = self.D(permute_dims(z2).detach())
        zeros = torch.zeros(len(x1), dtype=torch.long)
        ones = torch.ones(len(x1), dtype=torch.long)
        D_tc_loss = 0.5 * (F.cross_entropy(D_z, zeros) + F.cross_entropy(D_z_pperm, ones))
        self.optim_D.zero_grad()
        D_tc_loss.backward()
        self.optim_D.step()
        return vae_loss.item(), D_tc_loss.item()
