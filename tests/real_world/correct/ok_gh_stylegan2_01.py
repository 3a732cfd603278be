import torch
from torch import nn, autograd, optim
from torch.nn import functional as F

torch.manual_seed(0)


def requires_grad(model, flag=True):
    for p in model.parameters():
        p.requires_grad = flag


def accumulate(model1, model2, decay=0.999):
    par1 = dict(model1.named_parameters())
    par2 = dict(model2.named_parameters())

    for k in par1.keys():
        par1[k].data.mul_(decay).add_(par2[k].data, alpha=1 - decay)


def d_logistic_loss(real_pred, fake_pred):
    real_loss = F.softplus(-real_pred)
    fake_loss = F.softplus(fake_pred)
    return real_loss.mean() + fake_loss.mean()


def d_r1_loss(real_pred, real_img):
    grad_real, = autograd.grad(outputs=real_pred.sum(), inputs=real_img, create_graph=True)
    grad_penalty = grad_real.pow(2).reshape(grad_real.shape[0], -1).sum(1).mean()
    return grad_penalty


def g_nonsaturating_loss(fake_pred):
    return F.softplus(-fake_pred).mean()


class Generator(nn.Module):
    def __init__(self, latent=4):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(latent, 16), nn.LeakyReLU(0.2), nn.Linear(16, 3 * 4 * 4))

    def forward(self, styles):
        return self.net(styles[0]).view(-1, 3, 4, 4), None


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Flatten(), nn.Linear(3 * 4 * 4, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1))

    def forward(self, x):
        return self.net(x)


class Args:
    iter = 4
    batch = 2
    latent = 4
    d_reg_every = 2
    r1 = 10
    start_iter = 0


def train(args, loader, generator, discriminator, g_optim, d_optim, g_ema):
    loader = iter(loader)
    accum = 0.5 ** (32 / (10 * 1000))
    for idx in range(args.iter):
        i = idx + args.start_iter
        real_img = next(loader)

        requires_grad(generator, False)
        requires_grad(discriminator, True)

        noise = [torch.randn(args.batch, args.latent)]
        fake_img, _ = generator(noise)
        fake_pred = discriminator(fake_img)
        real_pred = discriminator(real_img)
        d_loss = d_logistic_loss(real_pred, fake_pred)

        discriminator.zero_grad()
        d_loss.backward()
        d_optim.step()

        d_regularize = i % args.d_reg_every == 0
        if d_regularize:
            real_img.requires_grad = True
            real_pred = discriminator(real_img)
            r1_loss = d_r1_loss(real_pred, real_img)

            discriminator.zero_grad()
            (args.r1 / 2 * r1_loss * args.d_reg_every + 0 * real_pred[0]).backward()
            d_optim.step()

        requires_grad(generator, True)
        requires_grad(discriminator, False)

        noise = [torch.randn(args.batch, args.latent)]
        fake_img, _ = generator(noise)
        fake_pred = discriminator(fake_img)
        g_loss = g_nonsaturating_loss(fake_pred)

        generator.zero_grad()
        g_loss.backward()
        g_optim.step()

        accumulate(g_ema, generator, accum)


args = Args()
generator, discriminator, g_ema = Generator(), Discriminator(), Generator()
g_ema.eval()
accumulate(g_ema, generator, 0)
g_optim = optim.Adam(generator.parameters(), lr=0.002, betas=(0.0 ** 0.8, 0.99 ** 0.8))
d_optim = optim.Adam(discriminator.parameters(), lr=0.002, betas=(0.0 ** 0.8, 0.99 ** 0.8))
loader = [torch.randn(args.batch, 3, 4, 4) for _ in range(args.iter)]
train(args, loader, generator, discriminator, g_optim, d_optim, g_ema)
