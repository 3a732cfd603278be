import torch
from torch import nn, optim

torch.manual_seed(0)


class Config:
    device = torch.device("cpu")
    pixel_weight = 0.01
    content_weight = 1.0
    adversarial_weight = 0.005


config = Config()


class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.LeakyReLU(0.2, True), nn.Conv2d(8, 12, 3, padding=1), nn.PixelShuffle(2))

    def forward(self, x):
        return torch.clamp_(self.body(x), 0.0, 1.0)


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(3, 8, 3, 2, 1), nn.BatchNorm2d(8), nn.LeakyReLU(0.2, True), nn.AdaptiveAvgPool2d(1))
        self.classifier = nn.Linear(8, 1)

    def forward(self, x):
        return self.classifier(torch.flatten(self.features(x), 1))


class ContentLoss(nn.Module):
    def __init__(self):
        super().__init__()
        self.feature_extractor = nn.Conv2d(3, 4, 3, padding=1)
        for model_parameters in self.feature_extractor.parameters():
            model_parameters.requires_grad = False

    def forward(self, sr, hr):
        return nn.functional.l1_loss(self.feature_extractor(sr), self.feature_extractor(hr))


def train(discriminator, generator, train_prefetcher, pixel_criterion, content_criterion, adversarial_criterion,
          d_optimizer, g_optimizer, epoch, scaler):
    # Put all model in train mode.
    discriminator.train()
    generator.train()

    for batch_data in train_prefetcher:
        # Send data to designated device
        lr = batch_data["lr"].to(config.device, non_blocking=True)
        hr = batch_data["hr"].to(config.device, non_blocking=True)

        # Set the real sample label to 1, and the false sample label to 0
        real_label = torch.full([lr.size(0), 1], 1.0, dtype=lr.dtype, device=config.device)
        fake_label = torch.full([lr.size(0), 1], 0.0, dtype=lr.dtype, device=config.device)

        # Start training discriminator
        discriminator.zero_grad()

        # Calculate the loss of the discriminator on the high-resolution image
        with torch.autocast("cpu", dtype=torch.bfloat16):
            # Use generators to create super-resolution images
            sr = generator(lr)
            hr_output = discriminator(hr)
            sr_output = discriminator(sr.detach())
            d_loss_hr = adversarial_criterion(hr_output - torch.mean(sr_output), real_label) * 0.5
        # Gradient zoom
        scaler.scale(d_loss_hr).backward(retain_graph=True)

        # Calculate the loss of the discriminator on the super-resolution image
        with torch.autocast("cpu", dtype=torch.bfloat16):
            sr_output = discriminator(sr.detach())
            d_loss_sr = adversarial_criterion(sr_output - torch.mean(hr_output), fake_label) * 0.5
        # Gradient zoom
        scaler.scale(d_loss_sr).backward()

        # Update gradient
        scaler.step(d_optimizer)
        scaler.update()

        # Count discriminator total loss
        d_loss = d_loss_hr + d_loss_sr
        # End training discriminator

        # Start training generator
        generator.zero_grad()

        # Calculate the loss of the generator on the super-resolution image
        with torch.autocast("cpu", dtype=torch.bfloat16):
            # Output discriminator to discriminate object probability
            hr_output = discriminator(hr.detach())
            sr_output = discriminator(sr)
            pixel_loss = config.pixel_weight * pixel_criterion(sr, hr.detach())
            content_loss = config.content_weight * content_criterion(sr, hr.detach())
            # Computational adversarial network loss
            d_loss_hr = adversarial_criterion(hr_output - torch.mean(sr_output), real_label) * 0.5
            d_loss_sr = adversarial_criterion(sr_output - torch.mean(hr_output), fake_label) * 0.5
            adversarial_loss = config.adversarial_weight * (d_loss_hr + d_loss_sr)
            # Count discriminator total loss
            g_loss = pixel_loss + content_loss + adversarial_loss
        # Gradient zoom
        scaler.scale(g_loss).backward()
        # Update generator parameters
        scaler.step(g_optimizer)
        scaler.update()


discriminator, generator = Discriminator(), Generator()
d_optimizer = optim.Adam(discriminator.parameters(), 1e-4, (0.9, 0.999))
g_optimizer = optim.Adam(generator.parameters(), 1e-4, (0.9, 0.999))
scaler = torch.amp.GradScaler("cpu")
prefetcher = [dict(lr=torch.rand(2, 3, 4, 4), hr=torch.rand(2, 3, 8, 8)) for _ in range(2)]
train(discriminator, generator, prefetcher, nn.L1Loss(), ContentLoss(), nn.BCEWithLogitsLoss(), d_optimizer, g_optimizer, 0, scaler)
