import torch
import torch.nn as nn

torch.manual_seed(0)


class Encoder_Decoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Conv2d(3, 8, 3, padding=1)
        self.dec = nn.Conv2d(8, 3, 3, padding=1)

    def forward(self, b):
        return torch.sigmoid(self.dec(torch.relu(self.enc(b))))


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, stride=2, padding=1)
        self.fc = nn.Linear(4 * 4 * 4, 1)

    def forward(self, x):
        return self.fc(torch.relu(self.conv(x)).flatten(1))


def train(model, netD, optimizer_netG, optimizer_netD, train_dataloader, epoch):
    bce = nn.BCEWithLogitsLoss()
    for it, (b, target) in enumerate(train_dataloader):
        pred = model(b)
        loss = torch.mean((pred - target) ** 2)

        # adversarial losses
        real_score = netD(target)
        fake_score_d = netD(pred.detach())
        loss_netD = bce(real_score, torch.ones_like(real_score)) + bce(fake_score_d, torch.zeros_like(fake_score_d))
        fake_score_g = netD(pred)
        loss_netG = loss + 0.01 * bce(fake_score_g, torch.ones_like(fake_score_g))

        # Train G
        optimizer_netG.zero_grad()
        loss_netG.backward()
        optimizer_netG.step()

        # Train D
        optimizer_netD.zero_grad()
        loss_netD.backward()
        optimizer_netD.step()


model = Encoder_Decoder()
netD = Discriminator()
optimizer_netG = torch.optim.Adamax(model.parameters(), lr=1e-3)
optimizer_netD = torch.optim.Adamax(netD.parameters(), lr=1e-3)
loader = [(torch.rand(2, 3, 8, 8), torch.rand(2, 3, 8, 8)) for _ in range(2)]
train(model, netD, optimizer_netG, optimizer_netD, loader, epoch=0)
