import torch
import torch.nn as nn
import torch.optim as optim
from torch.autograd import Variable

torch.manual_seed(0)


class Generator(nn.Module):
    def __init__(self, z_dim=4):
        super().__init__()
        self.net = nn.Sequential(nn.ConvTranspose2d(z_dim, 4, 4, 1, 0), nn.LeakyReLU(0.2), nn.ConvTranspose2d(4, 1, 4, 2, 1), nn.Tanh())

    def forward(self, z):
        return self.net(z)


class Encoder(nn.Module):
    def __init__(self, z_dim=4):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(1, 4, 4, 2, 1), nn.LeakyReLU(0.2), nn.Conv2d(4, z_dim, 4, 1, 0))

    def forward(self, x):
        return self.net(x)


class Discriminator(nn.Module):
    def __init__(self, z_dim=4):
        super().__init__()
        self.D_x = nn.Sequential(nn.Conv2d(1, 4, 4, 2, 1), nn.LeakyReLU(0.2), nn.Conv2d(4, 4, 4, 1, 0))
        self.D_xz = nn.Sequential(nn.Linear(4 + z_dim, 1), nn.Sigmoid())

    def forward(self, x, z):
        return self.D_xz(torch.cat([self.D_x(x).flatten(1), z.flatten(1)], 1))


class Args:
    latent_dim, num_epochs, lr_adam, wasserstein = 4, 1, 1e-4, False


class TrainerBiGAN:
    def __init__(self, args, data):
        self.args, self.train_loader, self.device = args, data, torch.device("cpu")

    def train(self):
        self.G = Generator(self.args.latent_dim).to(self.device)
        self.E = Encoder(self.args.latent_dim).to(self.device)
        self.D = Discriminator(self.args.latent_dim).to(self.device)
        optimizer_ge = optim.Adam(list(self.G.parameters()) + list(self.E.parameters()), lr=self.args.lr_adam)
        optimizer_d = optim.Adam(self.D.parameters(), lr=self.args.lr_adam)
        criterion = nn.BCELoss()
        for epoch in range(self.args.num_epochs + 1):
            for x, _ in self.train_loader:
                # Defining labels
                y_true = Variable(torch.ones((x.size(0), 1)).to(self.device))
                y_fake = Variable(torch.zeros((x.size(0), 1)).to(self.device))

                # Noise for improving training.
                noise1 = Variable(torch.Tensor(x.size()).normal_(0, 0.1 * (self.args.num_epochs - epoch) / self.args.num_epochs), requires_grad=False).to(self.device)
                noise2 = Variable(torch.Tensor(x.size()).normal_(0, 0.1 * (self.args.num_epochs - epoch) / self.args.num_epochs), requires_grad=False).to(self.device)

                # Cleaning gradients.
                optimizer_d.zero_grad()
                optimizer_ge.zero_grad()

                # Generator:
                z_fake = Variable(torch.randn((x.size(0), self.args.latent_dim, 1, 1)).to(self.device), requires_grad=False)
                x_fake = self.G(z_fake)

                # Encoder:
                x_true = x.float().to(self.device)
                z_true = self.E(x_true)

                # Discriminator
                out_true = self.D(x_true + noise1, z_true)
                out_fake = self.D(x_fake + noise2, z_fake)

                # Losses
                loss_d = criterion(out_true, y_true) + criterion(out_fake, y_fake)
                loss_ge = criterion(out_fake, y_true) + criterion(out_true, y_fake)

                # Computing gradients and backpropagate.
                loss_d.backward()
                optimizer_d.step()

                # Cleaning gradients.
                optimizer_ge.zero_grad()

                # Generator, Encoder and Discriminator again, after the discriminator step
                z_fake = Variable(torch.randn((x.size(0), self.args.latent_dim, 1, 1)).to(self.device), requires_grad=False)
                x_fake = self.G(z_fake)
                z_true = self.E(x_true)
                out_true = self.D(x_true + noise1, z_true)
                out_fake = self.D(x_fake + noise2, z_fake)
                loss_ge = criterion(out_fake, y_true) + criterion(out_true, y_fake)

                loss_ge.backward()
                optimizer_ge.step()


TrainerBiGAN(Args(), [(torch.rand(2, 1, 8, 8), None) for _ in range(2)]).train()
