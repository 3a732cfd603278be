import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class SVClampedLinear(nn.Linear):
    def __init__(self, in_features, out_features, sv_clamp=1.0):
        super().__init__(in_features, out_features)
        self.sv_clamp = sv_clamp

    def forward(self, x):
        U, S, Vh = torch.linalg.svd(self.weight, full_matrices=False)
        S = S.clamp(max=self.sv_clamp)
        return F.linear(x, U @ torch.diag(S) @ Vh, self.bias)


D = nn.Sequential(SVClampedLinear(8, 16), nn.LeakyReLU(0.2), SVClampedLinear(16, 1))
opt = torch.optim.Adam(D.parameters(), lr=2e-4, betas=(0.0, 0.999))
for _ in range(2):
    loss = F.relu(1.0 - D(torch.randn(4, 8) + 1)).mean() + F.relu(1.0 + D(torch.randn(4, 8))).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
