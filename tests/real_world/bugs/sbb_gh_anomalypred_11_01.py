import torch
import torch.nn as nn

torch.manual_seed(0)


class UNet(nn.Module):
    def __init__(self, input_channels, output_channel=3):
        super(UNet, self).__init__()
        self.inc = nn.Conv2d(input_channels, 8, 3, padding=1)
        self.outc = nn.Conv2d(8, output_channel, 3, padding=1)

    def forward(self, x):
        return torch.tanh(self.outc(torch.relu(self.inc(x))))


class PixelDiscriminator(nn.Module):
    def __init__(self, input_nc, num_filters=(8, 16)):
        super(PixelDiscriminator, self).__init__()
        self.net = nn.Sequential(nn.Conv2d(input_nc, num_filters[0], 1), nn.LeakyReLU(0.2),
                                 nn.Conv2d(num_filters[0], num_filters[1], 1), nn.LeakyReLU(0.2),
                                 nn.Conv2d(num_filters[1], 1, 1))

    def forward(self, input):
        return torch.sigmoid(self.net(input))


class Intensity_Loss(nn.Module):
    def forward(self, gen_frames, gt_frames):
        return torch.mean(torch.abs((gen_frames - gt_frames) ** 2))


class Adversarial_Loss(nn.Module):
    def forward(self, fake_outputs):
        return torch.mean((fake_outputs - 1) ** 2 / 2)


class Discriminate_Loss(nn.Module):
    def forward(self, real_outputs, fake_outputs):
        return torch.mean((real_outputs - 1) ** 2 / 2) + torch.mean(fake_outputs ** 2 / 2)


generator = UNet(input_channels=12, output_channel=3)
discriminator = PixelDiscriminator(input_nc=3)
optimizer_G = torch.optim.Adam(generator.parameters(), lr=2e-4)
optimizer_D = torch.optim.Adam(discriminator.parameters(), lr=2e-5)
adversarial_loss = Adversarial_Loss()
discriminate_loss = Discriminate_Loss()
intensity_loss = Intensity_Loss()
train_dataloader = [torch.rand(2, 15, 8, 8) for _ in range(2)]

step = 0
training = True
generator.train()
discriminator.train()
while training:
    for clips in train_dataloader:
        input_frames = clips[:, 0:12, :, :]
        target_frame = clips[:, 12:15, :, :]

        G_frame = generator(input_frames)
        inte_l = intensity_loss(G_frame, target_frame)
        adv_l = adversarial_loss(discriminator(G_frame))
        G_l_t = 1. * inte_l + 0.05 * adv_l

        # When training discriminator, don't train generator, so use .detach() to cut off gradients.
        D_l = discriminate_loss(discriminator(target_frame), discriminator(G_frame.detach()))

        # Train discriminator
        optimizer_D.zero_grad()
        D_l.backward()
        optimizer_D.step()

        # Train generator
        optimizer_G.zero_grad()
        G_l_t.backward()
        optimizer_G.step()

        step += 1
        if step == 2:
            training = False
            break
