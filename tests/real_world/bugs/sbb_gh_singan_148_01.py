import torch
import torch.nn as nn
import torch.optim as optim


class Opt:
    niter = 2
    Dsteps = 3
    Gsteps = 3
    lr_d = lr_g = 0.0005
    beta1 = 0.5
    lambda_grad = 0.1
    alpha = 10
    nzx = nzy = 8
    noise_amp = 0.1
    device = torch.device("cpu")


def calc_gradient_penalty(netD, real_data, fake_data, LAMBDA, device):
    alpha = torch.rand(1, 1).expand(real_data.size())
    interpolates = alpha * real_data + ((1 - alpha) * fake_data)
    interpolates = torch.autograd.Variable(interpolates, requires_grad=True)
    disc_interpolates = netD(interpolates)
    gradients = torch.autograd.grad(outputs=disc_interpolates, inputs=interpolates,
                                    grad_outputs=torch.ones(disc_interpolates.size()),
                                    create_graph=True, retain_graph=True, only_inputs=True)[0]
    return ((gradients.norm(2, dim=1) - 1) ** 2).mean() * LAMBDA


class WDiscriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.LeakyReLU(0.2), nn.Conv2d(4, 1, 3, padding=1))

    def forward(self, x):
        return self.body(x)


class GeneratorConcatSkip2CleanAdd(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.LeakyReLU(0.2), nn.Conv2d(4, 3, 3, padding=1))

    def forward(self, x, y):
        return torch.tanh(self.body(x)) + y


def train_single_scale(netD, netG, real, opt):
    optimizerD = optim.Adam(netD.parameters(), lr=opt.lr_d, betas=(opt.beta1, 0.999))
    optimizerG = optim.Adam(netG.parameters(), lr=opt.lr_g, betas=(opt.beta1, 0.999))
    loss = nn.MSELoss()
    z_opt = torch.randn(1, 3, opt.nzx, opt.nzy)
    alpha = opt.alpha

    for epoch in range(opt.niter):
        noise_ = torch.randn(1, 3, opt.nzx, opt.nzy)
        prev = torch.zeros(1, 3, opt.nzx, opt.nzy)
        z_prev = torch.zeros(1, 3, opt.nzx, opt.nzy)
        noise = noise_

        ############################
        # (1) Update D network: maximize D(x) + D(G(z))
        ###########################
        for j in range(opt.Dsteps):
            # train with real
            netD.zero_grad()
            output = netD(real).to(opt.device)
            errD_real = -output.mean()
            errD_real.backward(retain_graph=True)

            # train with fake
            fake = netG(noise.detach(), prev)
            output = netD(fake.detach())
            errD_fake = output.mean()
            errD_fake.backward(retain_graph=True)

            gradient_penalty = calc_gradient_penalty(netD, real, fake, opt.lambda_grad, opt.device)
            gradient_penalty.backward()
            optimizerD.step()

        ############################
        # (2) Update G network: maximize D(G(z))
        ###########################
        for j in range(opt.Gsteps):
            netG.zero_grad()
            output = netD(fake)
            errG = -output.mean()
            errG.backward(retain_graph=True)
            if alpha != 0:
                Z_opt = opt.noise_amp * z_opt + z_prev
                rec_loss = alpha * loss(netG(Z_opt.detach(), z_prev), real)
                rec_loss.backward(retain_graph=True)
            optimizerG.step()


torch.manual_seed(0)
real = torch.rand(1, 3, 8, 8)
train_single_scale(WDiscriminator(), GeneratorConcatSkip2CleanAdd(), real, Opt())
