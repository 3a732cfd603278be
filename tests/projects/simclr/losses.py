import torch
import torch.nn.functional as F


def nt_xent(z1, z2, temperature=0.5):
    z1 /= z1.norm(dim=1, keepdim=True)
    z2 = z2 / z2.norm(dim=1, keepdim=True)
    logits = z1 @ z2.t() / temperature
    labels = torch.arange(z1.shape[0])
    return F.cross_entropy(logits, labels)
