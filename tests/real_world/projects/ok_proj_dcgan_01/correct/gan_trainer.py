import torch
import torch.nn.functional as F


class Trainer:
    def __init__(self, G, D, nz=4):
        self.G, self.D, self.nz = G, D, nz
        self.optD = torch.optim.Adam(D.parameters(), lr=2e-4, betas=(0.5, 0.999))
        self.optG = torch.optim.Adam(G.parameters(), lr=2e-4, betas=(0.5, 0.999))

    def step(self, real):
        b = real.shape[0]
        label = torch.full((b, 1), 1.0)
        self.D.zero_grad()
        errD_real = F.binary_cross_entropy_with_logits(self.D(real), label)
        errD_real.backward()
        fake = self.G(torch.randn(b, self.nz))
        label.fill_(0.0)
        errD_fake = F.binary_cross_entropy_with_logits(self.D(fake.detach()), label)
        errD_fake.backward()
        self.optD.step()

        self.G.zero_grad()
        label.fill_(1.0)
        errG = F.binary_cross_entropy_with_logits(self.D(fake), label)
        errG.backward()
        self.optG.step()
        return errD_real.item() + errD_fake.item(), errG.item()
