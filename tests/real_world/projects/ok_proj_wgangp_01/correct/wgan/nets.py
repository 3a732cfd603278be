import torch.nn as nn


def critic(d=6):
    return nn.Sequential(nn.Linear(d, 32), nn.Tanh(), nn.Linear(32, 1))


def generator(z=3, d=6):
    return nn.Sequential(nn.Linear(z, 32), nn.Tanh(), nn.Linear(32, d))
