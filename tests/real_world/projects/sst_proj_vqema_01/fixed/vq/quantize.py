import torch
import torch.nn as nn
import torch.nn.functional as F

from .ema import ema_update


class Quantize(nn.Module):
    def __init__(self, dim=8, n_embed=16):
        super().__init__()
        embed = torch.randn(dim, n_embed)
        self.register_buffer("embed", embed)
        self.register_buffer("cluster_size", torch.zeros(n_embed))
        self.register_buffer("embed_avg", embed.clone())

    def forward(self, x):
        flatten = x.reshape(-1, x.shape[-1])
        dist = flatten.pow(2).sum(1, keepdim=True) - 2 * flatten @ self.embed + self.embed.pow(2).sum(0, keepdim=True)
        embed_ind = (-dist).max(1).indices
        onehot = F.one_hot(embed_ind, self.embed.shape[1]).type(flatten.dtype)
        quantize = F.embedding(embed_ind, self.embed.t()).view_as(x)
        if self.training:
            ema_update(self.embed, self.cluster_size, self.embed_avg, flatten.detach(), onehot)
        diff = (quantize.detach() - x).pow(2).mean() + 0.01 * dist.min(1).values.mean()
        quantize = x + (quantize - x).detach()
        return quantize, diff
