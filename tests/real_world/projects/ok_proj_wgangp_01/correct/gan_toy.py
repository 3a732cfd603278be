import torch

from wgan.nets import critic, generator
from wgan.penalty import calc_gradient_penalty

torch.manual_seed(0)
netD, netG = critic(), generator()
optD = torch.optim.Adam(netD.parameters(), lr=1e-4, betas=(0.5, 0.9))
optG = torch.optim.Adam(netG.parameters(), lr=1e-4, betas=(0.5, 0.9))
for iteration in range(2):
    for _ in range(3):
        real = torch.randn(16, 6) + 2
        fake = netG(torch.randn(16, 3)).detach()
        netD.zero_grad()
        gp = calc_gradient_penalty(netD, real, fake)
        d_cost = netD(fake).mean() - netD(real).mean() + gp
        d_cost.backward()
        optD.step()
    netG.zero_grad()
    g_cost = -netD(netG(torch.randn(16, 3))).mean()
    g_cost.backward()
    optG.step()
    print(iteration, d_cost.item(), g_cost.item())
