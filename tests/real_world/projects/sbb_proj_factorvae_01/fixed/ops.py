import torch


def permute_dims(z):
    return torch.stack([col[torch.randperm(len(col))] for col in z.t()], dim=1)


def kl_divergence(mu, logvar):
    return -0.5 * (1 + logvar - mu ** 2 - logvar.exp()).sum(1).mean()
