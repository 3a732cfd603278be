import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class LearnableFIR(nn.Module):
    def __init__(self, taps=5):
        super().__init__()
        self.coeffs = nn.Parameter(torch.randn(taps) * 0.1)

    def forward(self, x):
        self.coeffs[0] = 1.0
        kernel = self.coeffs.flip(0).view(1, 1, -1)
        return F.conv1d(F.pad(x, (kernel.size(-1) - 1, 0)), kernel)


fir = LearnableFIR()
opt = torch.optim.Adam(fir.parameters(), lr=1e-2)
signal = torch.randn(4, 1, 32)
target = signal + 0.5 * F.pad(signal, (1, 0))[..., :-1]
for _ in range(3):
    loss = F.mse_loss(fir(signal), target)
    opt.zero_grad()
    loss.backward()
    opt.step()
