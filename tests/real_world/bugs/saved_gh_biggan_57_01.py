import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class SVClampedLinear(nn.Linear):
    def __init__(self, in_features, out_features, sv_clamp=1.0):
        super().__init__(in_features, out_features)
        self.sv_clamp = sv_clamp

    def clamped_weight(self):
        W_mat = self.weight
        U, S, Vh = torch.linalg.svd(W_mat, full_matrices=False)
        S.clamp_(max=self.sv_clamp)
        return U @ torch.diag(S) @ Vh

    def forward(self, x):
        return F.linear(x, self.clamped_weight(), self.bias)


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.Sequential(SVClampedLinear(8, 16), nn.LeakyReLU(0.2), SVClampedLinear(16, 16), nn.LeakyReLU(0.2))
        self.linear = SVClampedLinear(16, 1)

    def forward(self, x):
        return self.linear(self.blocks(x))


D = Discriminator()
opt = torch.optim.Adam(D.parameters(), lr=2e-4, betas=(0.0, 0.999))
for _ in range(2):
    real, fake = torch.randn(4, 8) + 1, torch.randn(4, 8)
    loss = F.relu(1.0 - D(real)).mean() + F.relu(1.0 + D(fake)).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
