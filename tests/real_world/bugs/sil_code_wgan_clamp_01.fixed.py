import copy

import torch
import torch.nn as nn

torch.manual_seed(0)


def clip_weights(net, lower, upper):
    for p in net.parameters():
        p.data.clamp_(lower, upper)


def critic_step(netD, netG, optimizerD, real, clamp_lower=-0.05, clamp_upper=0.05):
    noise = torch.randn(real.size(0), 4)
    fake = netG(noise)
    clip_weights(netD, clamp_lower, clamp_upper)
    errD_real = netD(real).mean()
    errD_fake = netD(fake.detach()).mean()
    forward_weights = copy.deepcopy(netD)
    errD = errD_fake - errD_real
    optimizerD.zero_grad()
    errD.backward()
    grads = [p.grad.clone() for p in netD.parameters()]
    optimizerD.step()
    return grads, noise, forward_weights


netG = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 2))
netD = nn.Sequential(nn.Linear(2, 16), nn.ReLU(), nn.Linear(16, 16), nn.ReLU(), nn.Linear(16, 1))
optimizerD = torch.optim.RMSprop(netD.parameters(), lr=5e-5)
real = torch.randn(8, 2) + 2
grads, noise, before = critic_step(netD, netG, optimizerD, real)

errD = before(netG(noise).detach()).mean() - before(real).mean()
errD.backward()
if not all(torch.allclose(g, p.grad) for g, p in zip(grads, before.parameters())):
    print("wrong gradient: the critic's backward used weights clamped after its forward")
else:
    print("gradient ok")
