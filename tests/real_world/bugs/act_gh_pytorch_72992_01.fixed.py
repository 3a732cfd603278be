import torch
import torch.nn as nn

torch.manual_seed(0)


class Discriminator(nn.Module):
    def __init__(self, nc=1, ndf=4):
        super().__init__()
        self.main = nn.Sequential(
            nn.Conv2d(nc, ndf, 4, 2, 1, bias=False),
            nn.LeakyReLU(0.2, inplace=True),
            nn.Dropout(0.25),
            nn.Conv2d(ndf, 1, 4, 1, 0, bias=False),
            nn.Sigmoid(),
        )

    def forward(self, input):
        return self.main(input).view(-1)


netD = Discriminator()
optimizerD = torch.optim.Adam(netD.parameters(), lr=2e-4)
criterion = nn.BCELoss()
real = torch.randn(3, 1, 8, 8)
for _ in range(2):
    netD.zero_grad()
    errD = criterion(netD(real), torch.ones(3))
    errD.backward()
    optimizerD.step()
