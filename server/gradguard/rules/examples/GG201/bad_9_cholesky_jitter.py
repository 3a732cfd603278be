import torch
from torch import nn

# A Gaussian-process style log-likelihood: cholesky's backward needs its factor L as computed.
torch.manual_seed(0)
feat = nn.Linear(3, 5)
z = feat(torch.randn(8, 3))
kernel = z @ z.T + 0.1 * torch.eye(8)
chol = torch.linalg.cholesky(kernel)
chol.diagonal().clamp_(min=1e-4)  # <- GG201
y = torch.randn(8, 1)
alpha = torch.cholesky_solve(y, chol)
loss = 0.5 * (y * alpha).sum() + chol.diagonal().log().sum()
loss.backward()
