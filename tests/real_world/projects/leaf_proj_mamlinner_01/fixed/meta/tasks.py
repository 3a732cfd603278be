import math

import torch


def sine_task(generator, n=10):
    amp = 0.1 + 4.9 * torch.rand(1, generator=generator)
    phase = math.pi * torch.rand(1, generator=generator)
    x = 10 * torch.rand(2 * n, 1, generator=generator) - 5
    y = amp * torch.sin(x + phase)
    return (x[:n], y[:n]), (x[n:], y[n:])
