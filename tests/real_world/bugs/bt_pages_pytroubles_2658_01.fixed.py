import torch
import torch.nn as nn

torch.manual_seed(0)

latent_dim = 8
g_update_factor = 2
total_epochs = 1
dev = torch.device("cpu")

netG = nn.Sequential(nn.Linear(latent_dim, 32), nn.ReLU(), nn.Linear(32, 784), nn.Tanh())
netD = nn.Sequential(nn.Linear(784, 32), nn.LeakyReLU(0.2), nn.Linear(32, 1), nn.Sigmoid())
bce_loss = nn.BCELoss()
optG = torch.optim.Adam(netG.parameters(), lr=2e-4)
optD = torch.optim.Adam(netD.parameters(), lr=2e-4)
data_stream = [(torch.rand(4, 1, 28, 28), None) for _ in range(2)]

for epoch in range(total_epochs):
    for batch_id, (real_batch, _) in enumerate(data_stream):
        real_batch = real_batch.view(-1, 784).to(dev)
        bsz = real_batch.shape[0]

        # Generator updates (n times)
        for _ in range(g_update_factor):
            z = torch.randn(bsz, latent_dim).to(dev)
            fake_batch = netG(z)
            gen_scores = netD(fake_batch).view(-1)
            g_loss = bce_loss(gen_scores, torch.ones_like(gen_scores))
            g_loss.backward()
            optG.step()
            netG.zero_grad()

        # Discriminator update
        real_scores = netD(real_batch).view(-1)
        fake_scores = netD(fake_batch.detach()).view(-1)
        d_loss = bce_loss(real_scores, torch.ones_like(real_scores)) + bce_loss(fake_scores, torch.zeros_like(fake_scores))
        d_loss.backward()
        optD.step()
        netD.zero_grad()
