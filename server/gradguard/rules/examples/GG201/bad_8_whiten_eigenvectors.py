import torch
from torch import nn

# ZCA-style whitening: eigh's backward is written in its eigenvalues and eigenvectors, so it keeps both.
torch.manual_seed(0)
proj = nn.Linear(6, 4)
x = proj(torch.randn(32, 6))
centered = x - x.mean(dim=0)
cov = centered.T @ centered / 31 + 1e-3 * torch.eye(4)
evals, evecs = torch.linalg.eigh(cov)
evecs.mul_(evals.rsqrt())  # <- GG201
white = centered @ evecs
white.pow(2).mean().backward()
