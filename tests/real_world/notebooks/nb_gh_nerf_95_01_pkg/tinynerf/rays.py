import torch


def get_rays(n_rays, generator=None):
    origins = torch.zeros(n_rays, 3)
    origins[:, 2] = -2.0
    dirs = torch.randn(n_rays, 3, generator=generator) * 0.2
    dirs[:, 2] = 1.0
    return origins, dirs / dirs.norm(dim=-1, keepdim=True)


def sample_along_rays(origins, dirs, near=1.0, far=3.0, n_samples=16):
    t = torch.linspace(near, far, n_samples).expand(origins.shape[0], n_samples)
    pts = origins[:, None, :] + dirs[:, None, :] * t[..., None]
    return pts, t
