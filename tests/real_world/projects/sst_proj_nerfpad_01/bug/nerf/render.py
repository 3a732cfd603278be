import torch


def volume_render(field, origins, dirs, n_samples=16, near=0.0, far=2.0, rgb_padding=0.001):
    t = torch.linspace(near, far, n_samples)
    pts = origins[:, None, :] + dirs[:, None, :] * t[None, :, None]
    rgb, sigma = field(pts)
    rgb.mul_(1 + 2 * rgb_padding).sub_(rgb_padding)
    delta = torch.full_like(sigma, (far - near) / n_samples)
    alpha = 1 - torch.exp(-sigma * delta)
    trans = torch.cumprod(torch.cat([torch.ones_like(alpha[:, :1]), 1 - alpha[:, :-1] + 1e-10], -1), -1)
    weights = alpha * trans
    return (weights[..., None] * rgb).sum(dim=1)
