import torch
import torch.nn.functional as F


def info_nce(z1, z2, temperature=0.5):
    z = torch.cat([z1, z2], dim=0)
    z.div_(z.norm(dim=1, keepdim=True))
    sim = z @ z.t() / temperature
    n = z1.shape[0]
    sim = sim.masked_fill(torch.eye(2 * n, dtype=torch.bool), float("-inf"))
    targets = torch.cat([torch.arange(n, 2 * n), torch.arange(0, n)])
    return F.cross_entropy(sim, targets)
