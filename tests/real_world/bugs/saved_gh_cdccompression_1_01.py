import math

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def exists(x):
    return x is not None


class SinusoidalPosEmb(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        device = x.device
        half_dim = self.dim // 2
        emb = math.log(10000) / (half_dim - 1)
        emb = torch.exp(torch.arange(half_dim, device=device) * -emb)
        emb = x[:, None] * emb[None, :]
        emb = torch.cat((emb.sin(), emb.cos()), dim=-1)
        return emb


class LayerNorm(nn.Module):
    def __init__(self, dim, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.g = nn.Parameter(torch.ones(1, dim, 1, 1))
        self.b = nn.Parameter(torch.zeros(1, dim, 1, 1))

    def forward(self, x):
        var = torch.var(x, dim=1, unbiased=False, keepdim=True)
        mean = torch.mean(x, dim=1, keepdim=True)
        return (x - mean) / (var + self.eps).sqrt() * self.g + self.b


class Block(nn.Module):
    def __init__(self, dim, dim_out, large=False):
        super().__init__()
        self.block = nn.Sequential(
            nn.Conv2d(dim, dim_out, 7 if large else 3, padding=3 if large else 1), LayerNorm(dim_out), nn.ReLU()
        )

    def forward(self, x):
        return self.block(x)


class ResnetBlock(nn.Module):
    def __init__(self, dim, dim_out, time_emb_dim=None, large=False):
        super().__init__()
        self.mlp = (
            nn.Sequential(nn.LeakyReLU(0.2), nn.Linear(time_emb_dim, dim_out))
            if exists(time_emb_dim)
            else None
        )
        self.block1 = Block(dim, dim_out, large)
        self.block2 = Block(dim_out, dim_out)
        self.res_conv = nn.Conv2d(dim, dim_out, 1) if dim != dim_out else nn.Identity()

    def forward(self, x, time_emb=None):
        h = self.block1(x)

        if exists(time_emb):
            h += self.mlp(time_emb)[:, :, None, None]

        h = self.block2(h)
        return h + self.res_conv(x)


class Unet(nn.Module):
    def __init__(self, dim=8, channels=3):
        super().__init__()
        self.time_mlp = nn.Sequential(SinusoidalPosEmb(dim), nn.Linear(dim, dim * 4), nn.LeakyReLU(0.2), nn.Linear(dim * 4, dim))
        self.init_conv = nn.Conv2d(channels, dim, 3, padding=1)
        self.down = ResnetBlock(dim, dim * 2, time_emb_dim=dim)
        self.up = ResnetBlock(dim * 2, dim, time_emb_dim=dim)
        self.final_conv = nn.Conv2d(dim, channels, 1)

    def forward(self, x, time):
        t = self.time_mlp(time)
        x = self.init_conv(x)
        x = self.down(x, t)
        x = self.up(x, t)
        return self.final_conv(x)


class GaussianDiffusion(nn.Module):
    def __init__(self, denoise_fn, num_timesteps=10):
        super().__init__()
        self.denoise_fn = denoise_fn
        self.num_timesteps = num_timesteps
        betas = torch.linspace(1e-4, 0.02, num_timesteps)
        self.register_buffer("alphas_cumprod", torch.cumprod(1.0 - betas, dim=0))

    def q_sample(self, x_start, t, noise):
        a = self.alphas_cumprod[t].view(-1, 1, 1, 1)
        return a.sqrt() * x_start + (1 - a).sqrt() * noise

    def p_losses(self, x_start, t):
        noise = torch.randn_like(x_start)
        x_noisy = self.q_sample(x_start, t, noise)
        fx = self.denoise_fn(x_noisy, t.float() / self.num_timesteps)
        return F.mse_loss(fx, noise)

    def forward(self, images):
        t = torch.randint(0, self.num_timesteps, (images.shape[0],)).long()
        return self.p_losses(images * 2.0 - 1.0, t)


model = GaussianDiffusion(Unet())
optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
for step in range(2):
    images = torch.rand(2, 3, 8, 8)
    loss = model(images)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
