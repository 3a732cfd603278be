import torch
from torch import nn, optim
from torch.nn import functional as F

torch.manual_seed(0)


class VAE(nn.Module):
    def __init__(self, img_size=16, latent_dim=4):
        super(VAE, self).__init__()
        self.encoder = nn.Sequential(nn.Linear(img_size, 8), nn.ReLU(), nn.Linear(8, 2 * latent_dim))
        self.decoder = nn.Linear(latent_dim, img_size)
        self.latent_dim = latent_dim

    def reparameterize(self, mean, logvar):
        std = torch.exp(0.5 * logvar)
        return mean + std * torch.randn_like(std)

    def forward(self, x):
        mean, logvar = self.encoder(x).chunk(2, dim=-1)
        latent_sample = self.reparameterize(mean, logvar)
        reconstruct = torch.sigmoid(self.decoder(latent_sample))
        return reconstruct, (mean, logvar), latent_sample

    def sample_latent(self, x):
        mean, logvar = self.encoder(x).chunk(2, dim=-1)
        return self.reparameterize(mean, logvar)


class Discriminator(nn.Module):
    def __init__(self, latent_dim=4, hidden_units=8):
        super(Discriminator, self).__init__()
        self.lin1 = nn.Linear(latent_dim, hidden_units)
        self.lin2 = nn.Linear(hidden_units, 2)

    def forward(self, z):
        return self.lin2(F.leaky_relu(self.lin1(z), 0.2))


def _permute_dims(latent_sample):
    perm = torch.zeros_like(latent_sample)
    batch_size, dim_z = perm.size()
    for z in range(dim_z):
        pi = torch.randperm(batch_size)
        perm[:, z] = latent_sample[pi, z]
    return perm


class FactorKLoss(object):
    def __init__(self, gamma=10.):
        self.gamma = gamma
        self.discriminator = Discriminator()
        self.optimizer_d = optim.Adam(self.discriminator.parameters(), lr=5e-5, betas=(0.5, 0.9))

    def __call__(self, data, model, optimizer):
        batch_size = data.size(dim=0)
        half_batch_size = batch_size // 2
        data = data.split(half_batch_size)
        data1 = data[0]
        data2 = data[1]

        # Factor VAE Loss
        recon_batch, latent_dist, latent_sample1 = model(data1)
        rec_loss = F.binary_cross_entropy(recon_batch, data1, reduction="sum") / half_batch_size
        mean, logvar = latent_dist
        kl_loss = (0.5 * (-1 - logvar + mean.pow(2) + logvar.exp())).sum(1).mean()

        d_z = self.discriminator(latent_sample1)
        # We want log(p_true/p_false). If not using logisitc regression but softmax
        # then p_true = exp(logit_true) / Z; p_false = exp(logit_false) / Z
        # so log(p_true/p_false) = logit_true - logit_false
        tc_loss = (d_z[:, 0] - d_z[:, 1]).mean()
        vae_loss = rec_loss + kl_loss + self.gamma * tc_loss

        if not model.training:
            # don't backprop if evaluating
            return vae_loss

        # Run VAE optimizer
        optimizer.zero_grad()
        vae_loss.backward(retain_graph=True)
        optimizer.step()

        # Discriminator Loss
        # Get second sample of latent distribution
        latent_sample2 = model.sample_latent(data2)
        z_perm = _permute_dims(latent_sample2).detach()
        d_z_perm = self.discriminator(z_perm)

        # Calculate total correlation loss
        # for cross entropy the target is the index => need to be long and says
        # that it's first output for d_z and second for perm
        ones = torch.ones(half_batch_size, dtype=torch.long)
        zeros = torch.zeros_like(ones)
        d_tc_loss = 0.5 * (F.cross_entropy(d_z, zeros) + F.cross_entropy(d_z_perm, ones))
        # with sigmoid would be :
        # d_tc_loss = 0.5 * (self.bce(d_z.flatten(), ones) + self.bce(d_z_perm.flatten(), 1 - ones))

        # Run discriminator optimizer
        self.optimizer_d.zero_grad()
        d_tc_loss.backward()
        self.optimizer_d.step()

        return vae_loss


model = VAE()
optimizer = optim.Adam(model.parameters(), lr=5e-4)
loss_f = FactorKLoss()
for _ in range(2):
    loss_f(torch.rand(8, 16), model, optimizer)
