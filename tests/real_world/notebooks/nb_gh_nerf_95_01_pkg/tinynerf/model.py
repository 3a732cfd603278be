import torch
import torch.nn as nn


def positional_encoding(x, n_freqs):
    out = [x]
    for i in range(n_freqs):
        out += [torch.sin((2.0 ** i) * x), torch.cos((2.0 ** i) * x)]
    return torch.cat(out, dim=-1)


class NeRF(nn.Module):
    """Coarse NeRF MLP: returns raw (rgb logits, density logit) per sample."""

    def __init__(self, n_freqs=4, width=32):
        super().__init__()
        self.n_freqs = n_freqs
        in_dim = 3 * (1 + 2 * n_freqs)
        self.mlp = nn.Sequential(nn.Linear(in_dim, width), nn.ReLU(), nn.Linear(width, width), nn.ReLU(),
                                 nn.Linear(width, 4))

    def forward(self, pts):
        return self.mlp(positional_encoding(pts, self.n_freqs))
