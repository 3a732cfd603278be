import torch
from torch import nn
from torch.nn import functional as F

torch.manual_seed(0)


class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.mapping_z = nn.Sequential(nn.Linear(4, 8), nn.LeakyReLU(0.2))
        self.synthesis = nn.Linear(8, 12)

    def forward(self, z):
        stylecode = self.mapping_z(z)
        return self.synthesis(stylecode).view(-1, 3, 2, 2), stylecode


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.generator = Generator()
        self.encoder = nn.Sequential(nn.Flatten(), nn.Linear(12, 8))
        self.discriminator = nn.Sequential(nn.Flatten(), nn.Linear(12, 1))

    def forward(self, real_img, train_mode):
        if train_mode == "G":
            z = torch.randn(2, 4)
            fake_img, stylecode = self.generator(z)
            fake_pred = self.discriminator(fake_img)
            adv_loss = F.softplus(-fake_pred).mean()
            fake_stylecode = self.encoder(fake_img)
            w_rec_loss = F.mse_loss(stylecode, fake_stylecode)
            return adv_loss, w_rec_loss, stylecode


class Args:
    lambda_adv_loss = 1.0
    lambda_w_rec_loss = 1.0


args = Args()
model = Model()
g_optim = torch.optim.Adam(list(model.generator.parameters()) + list(model.encoder.parameters()), lr=2e-3)

for i in range(2):
    model.zero_grad()
    adv_loss, w_rec_loss, stylecode = model(None, "G")
    adv_loss = adv_loss.mean()
    w_rec_loss = w_rec_loss.mean()
    g_loss = adv_loss * args.lambda_adv_loss

    g_optim.zero_grad()
    g_loss.backward()
    (w_rec_loss * args.lambda_w_rec_loss).backward()
    g_optim.step()
