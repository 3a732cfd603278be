import torch
from torch import nn

torch.manual_seed(0)

generator = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 2))
discriminator = nn.Sequential(nn.Linear(2, 16), nn.ReLU(), nn.Linear(16, 1))
optim_g = torch.optim.Adam(generator.parameters(), lr=1e-3)
optim_d = torch.optim.Adam(discriminator.parameters(), lr=1e-3)
bce = nn.BCEWithLogitsLoss()

for it in range(2):
    real = torch.randn(8, 2) + 2.0
    fake = generator(torch.randn(8, 4))
    d_fake = discriminator(fake)
    d_real = discriminator(real)

    # computing loss_g and loss_d...
    loss_g = bce(d_fake, torch.ones_like(d_fake))
    # the discriminator must not backpropagate into the generator
    d_fake_detached = discriminator(fake.detach())
    loss_d = bce(d_real, torch.ones_like(d_real)) + bce(d_fake_detached, torch.zeros_like(d_fake_detached))

    optim_g.zero_grad()
    loss_g.backward()
    optim_g.step()

    optim_d.zero_grad()
    loss_d.backward()
    optim_d.step()
