import torch
from torch import nn

# eigh keeps both of its outputs for backward: scale a new tensor, not the eigenvectors it returned.
torch.manual_seed(0)
proj = nn.Linear(6, 4)
x = proj(torch.randn(32, 6))
centered = x - x.mean(dim=0)
cov = centered.T @ centered / 31 + 1e-3 * torch.eye(4)
evals, evecs = torch.linalg.eigh(cov)
scaled = evecs * evals.rsqrt()
white = centered @ scaled
white.pow(2).mean().backward()
