import torch
import torch.nn as nn

torch.manual_seed(0)


def critic_step(netD, netG, optimizerD, real, clamp_lower=-0.05, clamp_upper=0.05):
    for p in netD.parameters():
        p.data.clamp_(clamp_lower, clamp_upper)
    fake = netG(torch.randn(real.size(0), 4))
    errD = netD(fake.detach()).mean() - netD(real).mean()
    optimizerD.zero_grad()
    errD.backward()
    optimizerD.step()
    return errD.item()


def generator_step(netD, netG, optimizerG, batch_size):
    errG = -netD(netG(torch.randn(batch_size, 4))).mean()
    optimizerG.zero_grad()
    errG.backward()
    optimizerG.step()


netG = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 2))
netD = nn.Sequential(nn.Linear(2, 16), nn.ReLU(), nn.Linear(16, 1))
optimizerD = torch.optim.RMSprop(netD.parameters(), lr=5e-5)
optimizerG = torch.optim.RMSprop(netG.parameters(), lr=5e-5)
for gen_iteration in range(2):
    for _ in range(3):
        critic_step(netD, netG, optimizerD, torch.randn(8, 2) + 2)
    generator_step(netD, netG, optimizerG, 8)
