import torch.nn as nn


def generator(z_dim=5, out_dim=15):
    return nn.Sequential(nn.Linear(z_dim, 64), nn.ReLU(), nn.Linear(64, out_dim))


def discriminator(in_dim=15):
    return nn.Sequential(nn.Linear(in_dim, 64), nn.ReLU(), nn.Linear(64, 1), nn.Sigmoid())
