import torch
import torch.nn as nn
import torch.optim as optim

torch.manual_seed(0)
nz = 4


class MLP_G(nn.Module):
    def __init__(self, isize, nz, nc, ngf):
        super(MLP_G, self).__init__()
        main = nn.Sequential(
            nn.Linear(nz, ngf),
            nn.ReLU(True),
            nn.Linear(ngf, nc * isize * isize),
        )
        self.main = main
        self.nc, self.isize, self.nz = nc, isize, nz

    def forward(self, input):
        input = input.view(input.size(0), input.size(1))
        output = self.main(input)
        return output.view(output.size(0), self.nc, self.isize, self.isize)


class MLP_D(nn.Module):
    def __init__(self, isize, nz, nc, ndf):
        super(MLP_D, self).__init__()
        main = nn.Sequential(
            nn.Linear(nc * isize * isize, ndf),
            nn.ReLU(True),
            nn.Linear(ndf, 1),
        )
        self.main = main

    def forward(self, input):
        input = input.view(input.size(0), -1)
        output = self.main(input)
        output = output.mean(0)
        return output.view(1)


netG, netD = MLP_G(4, nz, 1, 8), MLP_D(4, nz, 1, 8)
optimizerD = optim.RMSprop(netD.parameters(), lr=5e-5)
optimizerG = optim.RMSprop(netG.parameters(), lr=5e-5)
one = torch.FloatTensor([1])
mone = one * -1
for gen_iterations in range(2):
    for p in netD.parameters():
        p.requires_grad = True
    for j in range(2):
        for p in netD.parameters():
            p.data.clamp_(-0.01, 0.01)
        netD.zero_grad()
        real = torch.randn(3, 1, 4, 4)
        errD_real = netD(real)
        errD_real.backward(one)
        noise = torch.randn(3, nz, 1, 1)
        with torch.no_grad():
            fake = netG(noise)
        errD_fake = netD(fake)
        errD_fake.backward(mone)
        optimizerD.step()
    for p in netD.parameters():
        p.requires_grad = False
    netG.zero_grad()
    fake = netG(torch.randn(3, nz, 1, 1))
    errG = netD(fake)
    errG.backward(one)
    optimizerG.step()
