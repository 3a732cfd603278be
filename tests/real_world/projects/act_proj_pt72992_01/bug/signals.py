import torch


def sine_batch(n=8, length=32, generator=None):
    t = torch.linspace(0, 6.28, length)
    phase = torch.rand(n, 1, generator=generator) * 6.28
    real = torch.stack([torch.sin(t + phase), torch.cos(t + phase)], dim=1)
    noise = torch.randn(n, 2, length, generator=generator)
    return real, noise
