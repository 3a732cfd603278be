import torch


def train_single_scale(netG, netD, real, d_steps=2, g_steps=2, alpha=10.0):
    optimizerD = torch.optim.Adam(netD.parameters(), lr=5e-4, betas=(0.5, 0.999))
    optimizerG = torch.optim.Adam(netG.parameters(), lr=5e-4, betas=(0.5, 0.999))
    prev = torch.zeros_like(real)
    for epoch in range(2):
        for _ in range(d_steps):
            netD.zero_grad()
            errD_real = -netD(real).mean()
            errD_real.backward(retain_graph=True)
            noise = torch.randn_like(real)
            fake = netG(noise.detach(), prev)
            errD_fake = netD(fake.detach()).mean()
            errD_fake.backward(retain_graph=True)
            optimizerD.step()
        for _ in range(g_steps):
            netG.zero_grad()
            fake = netG(noise.detach(), prev)
            errG = -netD(fake).mean()
            errG.backward(retain_graph=True)
            rec = alpha * ((netG(torch.zeros_like(real), prev) - real) ** 2).mean()
            rec.backward(retain_graph=True)
            optimizerG.step()
    return errD_real.item(), errG.item()
