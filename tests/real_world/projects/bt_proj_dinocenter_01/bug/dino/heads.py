import torch.nn as nn


def dino_head(d_in=12, out_dim=8):
    return nn.Sequential(nn.Linear(d_in, 32), nn.GELU(), nn.Linear(32, out_dim))
