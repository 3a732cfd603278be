import torch


def gcn_norm(adj, add_self_loops=False):
    if add_self_loops:
        adj = adj + torch.eye(adj.shape[0])
    deg = adj.sum(dim=1)
    deg_inv_sqrt = deg.pow(-0.5)
    deg_inv_sqrt.masked_fill_(deg_inv_sqrt == float("inf"), 0.0)
    return deg_inv_sqrt[:, None] * adj * deg_inv_sqrt[None, :]
