import math

import torch

torch.manual_seed(0)


def sym_eig3x3(A, eps=1e-7):
    q = A.diagonal(dim1=-2, dim2=-1).sum(-1) / 3
    p1 = A[..., 0, 1] ** 2 + A[..., 0, 2] ** 2 + A[..., 1, 2] ** 2
    p2 = (A[..., 0, 0] - q) ** 2 + (A[..., 1, 1] - q) ** 2 + (A[..., 2, 2] - q) ** 2 + 2 * p1
    p = torch.sqrt(p2 / 6)
    p.clamp_(min=eps)
    B = (A - q[..., None, None] * torch.eye(3)) / p[..., None, None]
    r = torch.linalg.det(B).div(2).clamp(-1 + 1e-6, 1 - 1e-6)
    phi = torch.acos(r) / 3
    eig1 = q + 2 * p * torch.cos(phi)
    eig3 = q + 2 * p * torch.cos(phi + 2 * math.pi / 3)
    eig2 = 3 * q - eig1 - eig3
    return torch.stack((eig1, eig2, eig3), -1)


def fractional_anisotropy(w):
    mean = w.mean(-1, keepdim=True)
    return (1.5 * ((w - mean) ** 2).sum(-1) / (w ** 2).sum(-1)).sqrt()


net = torch.nn.Linear(6, 6)
opt = torch.optim.Adam(net.parameters(), lr=1e-3)
idx = torch.triu_indices(3, 3)
for _ in range(2):
    flat = net(torch.randn(16, 6))
    A = torch.zeros(16, 3, 3)
    A[:, idx[0], idx[1]] = flat
    A = A + A.transpose(1, 2) + 3 * torch.eye(3)
    loss = (fractional_anisotropy(sym_eig3x3(A)) - 0.3).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
