import torch
import torch.nn as nn


class RadianceField(nn.Module):
    def __init__(self, n_freqs=4, hidden=32):
        super().__init__()
        self.n_freqs = n_freqs
        d_in = 3 + 3 * 2 * n_freqs
        self.mlp = nn.Sequential(nn.Linear(d_in, hidden), nn.ReLU(), nn.Linear(hidden, 4))

    def encode(self, pts):
        freqs = 2.0 ** torch.arange(self.n_freqs, dtype=pts.dtype)
        ang = pts[..., None] * freqs
        return torch.cat([pts, torch.sin(ang).flatten(-2), torch.cos(ang).flatten(-2)], dim=-1)

    def forward(self, pts):
        raw = self.mlp(self.encode(pts))
        rgb = torch.sigmoid(raw[..., :3])
        sigma = torch.nn.functional.softplus(raw[..., 3])
        return rgb, sigma
