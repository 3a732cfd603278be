import torch


@torch.no_grad()
def ema_update(embed, cluster_size, embed_avg, flatten, onehot, decay=0.99, eps=1e-5):
    cluster_size.mul_(decay).add_(onehot.sum(0), alpha=1 - decay)
    embed_avg.mul_(decay).add_(flatten.t() @ onehot, alpha=1 - decay)
    n = cluster_size.sum()
    size = (cluster_size + eps) / (n + onehot.shape[1] * eps) * n
    embed.data.copy_(embed_avg / size.unsqueeze(0))
