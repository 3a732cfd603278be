import torch


def two_views(x, generator):
    noise1 = 0.1 * torch.randn(x.shape, generator=generator)
    noise2 = 0.1 * torch.randn(x.shape, generator=generator)
    return x + noise1, x * 0.9 + noise2
