import torch.nn as nn


def shared_encoder(d_in=10, d=16):
    return nn.Sequential(nn.Linear(d_in, d), nn.ReLU(), nn.Linear(d, d), nn.Tanh())
