import torch
from torch import nn, autograd, optim
from torch.nn import functional as F

torch.manual_seed(0)


def requires_grad(model, flag=True):
    for p in model.parameters():
        p.requires_grad = flag


def accumulate(model1, model2, decay=0.999):
    par1 = dict(model1.named_parameters())
    par2 = dict(model2.named_parameters())
    for k in par1.keys():
        par1[k].data.mul_(decay).add_(par2[k].data, alpha=1 - decay)


def d_logistic_loss(real_pred, fake_pred):
    return F.softplus(-real_pred).mean() + F.softplus(fake_pred).mean()


def g_nonsaturating_loss(fake_pred):
    return F.softplus(-fake_pred).mean()


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.structure = nn.Conv2d(3, 2, 3, padding=1)
        self.texture = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.AdaptiveAvgPool2d(1), nn.Flatten())

    def forward(self, x):
        return self.structure(x), self.texture(x)


class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.mod = nn.Linear(4, 2)
        self.out = nn.Conv2d(2, 3, 3, padding=1)

    def forward(self, structure, texture):
        return self.out(structure * self.mod(texture)[:, :, None, None])


def train(args, loader, encoder, generator, discriminator, e_optim, g_optim, d_optim, e_ema, g_ema):
    accum = 0.5 ** (32 / (10 * 1000))
    for i, real_img in enumerate(loader):
        requires_grad(encoder, False)
        requires_grad(generator, False)
        requires_grad(discriminator, True)

        real_img1, real_img2 = real_img.chunk(2, dim=0)

        structure1, texture1 = encoder(real_img1)
        _, texture2 = encoder(real_img2)

        fake_img1 = generator(structure1, texture1)
        fake_img2 = generator(structure1, texture2)

        fake_pred = discriminator(torch.cat((fake_img1, fake_img2), 0))
        real_pred = discriminator(real_img)
        d_loss = d_logistic_loss(real_pred, fake_pred)

        d_optim.zero_grad()
        d_loss.backward()
        d_optim.step()

        requires_grad(encoder, True)
        requires_grad(generator, True)
        requires_grad(discriminator, False)

        structure1, texture1 = encoder(real_img1)
        _, texture2 = encoder(real_img2)

        fake_img1 = generator(structure1, texture1)
        fake_img2 = generator(structure1, texture2)

        recon_loss = F.l1_loss(fake_img1, real_img1)

        fake_pred = discriminator(torch.cat((fake_img1, fake_img2), 0))
        g_loss = g_nonsaturating_loss(fake_pred)

        e_optim.zero_grad()
        g_optim.zero_grad()
        (recon_loss + 2 * g_loss).backward()
        e_optim.step()
        g_optim.step()

        accumulate(e_ema, encoder, accum)
        accumulate(g_ema, generator, accum)


encoder, generator, e_ema, g_ema = Encoder(), Generator(), Encoder(), Generator()
discriminator = nn.Sequential(nn.Conv2d(3, 4, 3, 2, 1), nn.LeakyReLU(0.2), nn.Flatten(), nn.Linear(4 * 4 * 4, 1))
e_optim = optim.Adam(encoder.parameters(), lr=2e-3, betas=(0.0, 0.99))
g_optim = optim.Adam(generator.parameters(), lr=2e-3, betas=(0.0, 0.99))
d_optim = optim.Adam(discriminator.parameters(), lr=2e-3, betas=(0.0, 0.99))
loader = [torch.rand(4, 3, 8, 8) for _ in range(2)]
train(None, loader, encoder, generator, discriminator, e_optim, g_optim, d_optim, e_ema, g_ema)
