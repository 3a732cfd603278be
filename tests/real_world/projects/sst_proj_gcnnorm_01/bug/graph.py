import torch


def ring_graph(n=10, extra_isolated=2):
    adj = torch.zeros(n + extra_isolated, n + extra_isolated)
    for i in range(n):
        adj[i, (i + 1) % n] = 1.0
        adj[(i + 1) % n, i] = 1.0
    return adj


def degree_scale(adj):
    deg = adj.sum(dim=1)
    return deg.pow(-0.5)
