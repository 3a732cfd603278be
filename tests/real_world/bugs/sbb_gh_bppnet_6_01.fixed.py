import torch
import torch.nn as nn

torch.manual_seed(0)


class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 3, 3, padding=1), nn.Tanh())

    def forward(self, x):
        return self.net(x)


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(6, 8, 4, 2, 1), nn.LeakyReLU(0.2), nn.Conv2d(8, 1, 4, 1, 1), nn.Sigmoid())

    def forward(self, x, y):
        return self.net(torch.cat([x, y], 1))


generator, discriminator = Generator(), Discriminator()
g_optimizer = torch.optim.Adam(generator.parameters(), lr=1e-3, betas=(0.5, 0.999))
d_optimizer = torch.optim.Adam(discriminator.parameters(), lr=1e-3, betas=(0.5, 0.999))
bce, l1 = nn.BCELoss(), nn.L1Loss()


def d_loss_fn(hazy, clear, dehazed):
    real_out = discriminator(hazy, clear)
    fake_out_d = discriminator(hazy, dehazed.detach())
    return bce(real_out, torch.ones_like(real_out)) + bce(fake_out_d, torch.zeros_like(fake_out_d))


def g_loss_fn(hazy, clear, dehazed):
    fake_out_g = discriminator(hazy, dehazed)
    return bce(fake_out_g, torch.ones_like(fake_out_g)) + 100 * l1(dehazed, clear)


def train(epochs, loader):
    for epoch in range(epochs):
        for hazy, clear in loader:
            dehazed = generator(hazy)
            # first the gradient descent on the discriminator ...
            d_loss = d_loss_fn(hazy, clear, dehazed)
            d_optimizer.zero_grad()
            d_loss.backward()
            d_optimizer.step()
            # ... then the generator loss, through the updated discriminator
            g_loss = g_loss_fn(hazy, clear, dehazed)
            g_optimizer.zero_grad()
            g_loss.backward()
            g_optimizer.step()


train(1, [(torch.rand(1, 3, 8, 8), torch.rand(1, 3, 8, 8)) for _ in range(2)])
