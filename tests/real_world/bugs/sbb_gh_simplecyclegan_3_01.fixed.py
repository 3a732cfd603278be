import itertools
import torch
import torch.nn as nn

torch.manual_seed(0)


class Generator(nn.Module):
    def __init__(self):
        super(Generator, self).__init__()
        self.model = nn.Sequential(nn.ReflectionPad2d(3), nn.Conv2d(3, 4, 7), nn.InstanceNorm2d(4), nn.ReLU(),
                                   nn.Conv2d(4, 3, 3, padding=1), nn.Tanh())

    def forward(self, x):
        return self.model(x)


class Discriminator(nn.Module):
    def __init__(self):
        super(Discriminator, self).__init__()
        self.model = nn.Sequential(nn.Conv2d(3, 4, 4, stride=2, padding=1), nn.LeakyReLU(0.2),
                                   nn.Conv2d(4, 1, 4, padding=1))

    def forward(self, x):
        return self.model(x)


def train(netG_A2B, netG_B2A, netD_A, netD_B, dataloader, n_epochs=1):
    criterion_GAN = nn.MSELoss()
    criterion_cycle = nn.L1Loss()
    optimizer_G = torch.optim.Adam(itertools.chain(netG_A2B.parameters(), netG_B2A.parameters()), lr=2e-4)
    optimizer_D_A = torch.optim.Adam(netD_A.parameters(), lr=2e-4)
    optimizer_D_B = torch.optim.Adam(netD_B.parameters(), lr=2e-4)
    for epoch in range(n_epochs):
        for real_A, real_B in dataloader:
            ###### Generators A2B and B2A ######
            optimizer_G.zero_grad()
            fake_B = netG_A2B(real_A)
            pred_fake = netD_B(fake_B)
            loss_GAN_A2B = criterion_GAN(pred_fake, torch.ones_like(pred_fake))
            fake_A = netG_B2A(real_B)
            pred_fake = netD_A(fake_A)
            loss_GAN_B2A = criterion_GAN(pred_fake, torch.ones_like(pred_fake))
            loss_cycle_ABA = criterion_cycle(netG_B2A(fake_B), real_A) * 10.0
            loss_cycle_BAB = criterion_cycle(netG_A2B(fake_A), real_B) * 10.0
            loss_G = loss_GAN_A2B + loss_GAN_B2A + loss_cycle_ABA + loss_cycle_BAB
            loss_G.backward()
            optimizer_G.step()

            ###### Discriminator A ######
            optimizer_D_A.zero_grad()
            pred_real = netD_A(real_A)
            loss_D_real = criterion_GAN(pred_real, torch.ones_like(pred_real))
            pred_fake = netD_A(fake_A.detach())
            loss_D_fake = criterion_GAN(pred_fake, torch.zeros_like(pred_fake))
            loss_D_A = (loss_D_real + loss_D_fake) * 0.5
            loss_D_A.backward()
            optimizer_D_A.step()

            ###### Discriminator B ######
            optimizer_D_B.zero_grad()
            pred_real = netD_B(real_B)
            loss_D_real = criterion_GAN(pred_real, torch.ones_like(pred_real))
            pred_fake = netD_B(fake_B.detach())
            loss_D_fake = criterion_GAN(pred_fake, torch.zeros_like(pred_fake))
            loss_D_B = (loss_D_real + loss_D_fake) * 0.5
            loss_D_B.backward()
            optimizer_D_B.step()


loader = [(torch.rand(1, 3, 8, 8), torch.rand(1, 3, 8, 8)) for _ in range(2)]
train(Generator(), Generator(), Discriminator(), Discriminator(), loader)
