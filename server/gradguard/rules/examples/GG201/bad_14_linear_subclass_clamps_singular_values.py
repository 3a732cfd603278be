import torch
import torch.nn.functional as F
from torch import nn

torch.manual_seed(0)


class SpectralClampedLinear(nn.Linear):
    """A Linear layer whose singular values are clamped at every forward (BigGAN's SV clamping)."""

    def __init__(self, in_features, out_features, max_sv=1.0):
        super().__init__(in_features, out_features)
        self.max_sv = max_sv

    def forward(self, x):
        U, S, Vh = torch.linalg.svd(self.weight, full_matrices=False)
        S.clamp_(max=self.max_sv)  # <- GG201
        return F.linear(x, U @ torch.diag(S) @ Vh, self.bias)


disc = nn.Sequential(SpectralClampedLinear(8, 16), nn.LeakyReLU(0.2), SpectralClampedLinear(16, 1))
opt = torch.optim.Adam(disc.parameters(), lr=2e-4)
loss = F.softplus(-disc(torch.randn(4, 8))).mean()
opt.zero_grad()
loss.backward()
opt.step()
