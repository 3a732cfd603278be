import torch


class TwoViews:
    """Two noisy, feature-dropped copies of each sample."""

    def __init__(self, noise=0.2, drop=0.1):
        self.noise, self.drop = noise, drop

    def one(self, x):
        keep = (torch.rand_like(x) > self.drop).float()
        return (x + self.noise * torch.randn_like(x)) * keep

    def __call__(self, x):
        return self.one(x), self.one(x)
