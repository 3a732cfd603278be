import torch


def random_rays(n, generator):
    origins = torch.zeros(n, 3)
    dirs = torch.nn.functional.normalize(torch.randn(n, 3, generator=generator), dim=-1)
    target = (dirs + 1) / 2
    return origins, dirs, target
