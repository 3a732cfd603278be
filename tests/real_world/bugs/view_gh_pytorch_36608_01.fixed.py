import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def rand_patch_brightness(images, size=3):
    top, left = 1, 2
    brightness = torch.rand(images.size(0)) + 0.5
    mask = torch.ones_like(images)
    mask[:, :, top:top + size, left:left + size] = brightness.view(-1, 1, 1, 1)
    return images * mask


netG = nn.Sequential(nn.Linear(4, 3 * 8 * 8), nn.Tanh())
netD = nn.Sequential(nn.Conv2d(3, 4, 3), nn.LeakyReLU(0.2), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(4, 1))
optG = torch.optim.Adam(netG.parameters(), lr=2e-4)
for _ in range(2):
    fake = netG(torch.randn(2, 4)).view(2, 3, 8, 8)
    lossG = F.softplus(-netD(rand_patch_brightness(fake))).mean()
    optG.zero_grad()
    lossG.backward()
    optG.step()
