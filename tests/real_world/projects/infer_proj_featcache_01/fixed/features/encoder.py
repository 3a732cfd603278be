import torch.nn as nn


def frozen_encoder(d_in=12, d_feat=24):
    enc = nn.Sequential(nn.Linear(d_in, d_feat), nn.GELU(), nn.Linear(d_feat, d_feat))
    for p in enc.parameters():
        p.requires_grad_(False)
    return enc
