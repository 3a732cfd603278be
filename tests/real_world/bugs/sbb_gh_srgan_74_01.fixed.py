import torch
from torch import nn

torch.manual_seed(0)
NUM_EPOCHS = 2


class Generator(nn.Module):
    def __init__(self, scale_factor=2):
        super(Generator, self).__init__()
        self.block1 = nn.Sequential(nn.Conv2d(3, 8, kernel_size=3, padding=1), nn.PReLU())
        self.block2 = nn.Sequential(nn.Conv2d(8, 3 * scale_factor ** 2, kernel_size=3, padding=1),
                                    nn.PixelShuffle(scale_factor))

    def forward(self, x):
        block1 = self.block1(x)
        block2 = self.block2(block1)
        return (torch.tanh(block2) + 1) / 2


class Discriminator(nn.Module):
    def __init__(self):
        super(Discriminator, self).__init__()
        self.net = nn.Sequential(
            nn.Conv2d(3, 8, kernel_size=3, padding=1),
            nn.LeakyReLU(0.2),
            nn.AdaptiveAvgPool2d(1),
            nn.Conv2d(8, 16, kernel_size=1),
            nn.LeakyReLU(0.2),
            nn.Conv2d(16, 1, kernel_size=1)
        )

    def forward(self, x):
        batch_size = x.size(0)
        return torch.sigmoid(self.net(x).view(batch_size))


class GeneratorLoss(nn.Module):
    def __init__(self):
        super(GeneratorLoss, self).__init__()
        self.mse_loss = nn.MSELoss()

    def forward(self, out_labels, out_images, target_images):
        adversarial_loss = torch.mean(1 - out_labels)
        image_loss = self.mse_loss(out_images, target_images)
        return image_loss + 0.001 * adversarial_loss


netG = Generator(2)
netD = Discriminator()
generator_criterion = GeneratorLoss()
optimizerG = torch.optim.Adam(netG.parameters())
optimizerD = torch.optim.Adam(netD.parameters())
train_loader = [(torch.rand(2, 3, 4, 4), torch.rand(2, 3, 8, 8)) for _ in range(2)]

for epoch in range(1, NUM_EPOCHS + 1):
    netG.train()
    netD.train()
    for data, target in train_loader:
        real_img = target
        z = data
        fake_img = netG(z)

        ############################
        # (1) Update D network: maximize D(x)-1-D(G(z))
        ###########################
        netD.zero_grad()
        real_out = netD(real_img).mean()
        fake_out = netD(fake_img).mean()
        d_loss = 1 - real_out + fake_out
        d_loss.backward(retain_graph=True)
        optimizerD.step()

        ############################
        # (2) Update G network: minimize 1-D(G(z)) + Image Loss
        ###########################
        netG.zero_grad()
        ## The two lines below are added to prevent runtime error in Google Colab ##
        fake_img = netG(z)
        fake_out = netD(fake_img).mean()
        g_loss = generator_criterion(fake_out, fake_img, real_img)
        g_loss.backward()

        optimizerG.step()
