"""Conditional WGAN-GP deblurring on synthetic 1-D signals.

usage: python train_deblur.py [--epochs N] [--batch-size B] [--lambda-gp L]
"""
import argparse
import logging
import math
import os
import tempfile
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

logger = logging.getLogger("deblur")


def parse_args():
    p = argparse.ArgumentParser(description="WGAN-GP deblurring (toy)")
    p.add_argument("--epochs", type=int, default=2)
    p.add_argument("--batch-size", type=int, default=16)
    p.add_argument("--signal-len", type=int, default=32)
    p.add_argument("--lr", type=float, default=1e-4)
    p.add_argument("--lambda-gp", type=float, default=10.0)
    p.add_argument("--critic-iters", type=int, default=1)
    p.add_argument("--content-weight", type=float, default=100.0)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--log-every", type=int, default=2)
    p.add_argument("--out-dir", default=None)
    return p.parse_args([])


class BlurredSignals(Dataset):
    """Sharp square waves and their box-blurred, noisy copies."""

    def __init__(self, n, length, seed):
        g = torch.Generator().manual_seed(seed)
        self.sharp = torch.sign(torch.sin(torch.linspace(0, 6 * math.pi, length)[None]
                                          * torch.rand(n, 1, generator=g) * 3))
        kernel = torch.ones(1, 1, 5) / 5
        blurred = F.conv1d(self.sharp[:, None], kernel, padding=2)[:, 0]
        self.blurred = blurred + 0.05 * torch.randn(n, length, generator=g)

    def __len__(self):
        return self.sharp.shape[0]

    def __getitem__(self, i):
        return self.blurred[i], self.sharp[i]


class Generator(nn.Module):
    def __init__(self, length, hidden=64):
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(length, hidden), nn.ReLU(),
            nn.Linear(hidden, hidden), nn.ReLU(),
            nn.Linear(hidden, length),
        )

    def forward(self, x):
        return x + self.net(x)  # residual: predict the sharpening


class Critic(nn.Module):
    def __init__(self, length, hidden=64):
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(2 * length, hidden), nn.LeakyReLU(0.2),
            nn.Linear(hidden, hidden), nn.LeakyReLU(0.2),
            nn.Linear(hidden, 1),
        )

    def forward(self, blurred, candidate):
        return self.net(torch.cat([blurred, candidate], dim=1))


def gradient_penalty(critic, blurred, real, fake):
    alpha = torch.rand(real.shape[0], 1)
    interp = (alpha * real + (1 - alpha) * fake).requires_grad_(True)
    scores = critic(blurred, interp)
    grads = torch.autograd.grad(scores.sum(), interp, create_graph=True)[0]
    return ((grads.norm(2, dim=1) - 1) ** 2).mean()


class AverageMeter:
    def __init__(self):
        self.total, self.count = 0.0, 0

    def update(self, value, n=1):
        self.total += value * n
        self.count += n

    @property
    def avg(self):
        return self.total / max(self.count, 1)


def psnr(pred, target):
    mse = F.mse_loss(pred, target).item()
    return 10 * math.log10(4.0 / max(mse, 1e-10))


@torch.no_grad()
def evaluate(gen, loader):
    gen.eval()
    meter = AverageMeter()
    for blurred, sharp in loader:
        meter.update(psnr(gen(blurred), sharp), blurred.shape[0])
    gen.train()
    return meter.avg


def save_checkpoint(path, gen, critic, opt_g, opt_d, epoch):
    torch.save({"gen": gen.state_dict(), "critic": critic.state_dict(),
                "opt_g": opt_g.state_dict(), "opt_d": opt_d.state_dict(), "epoch": epoch}, path)


def train(args):
    torch.manual_seed(args.seed)
    train_set = BlurredSignals(64, args.signal_len, seed=1)
    val_set = BlurredSignals(16, args.signal_len, seed=2)
    train_loader = DataLoader(train_set, batch_size=args.batch_size, shuffle=True)
    val_loader = DataLoader(val_set, batch_size=args.batch_size)

    gen = Generator(args.signal_len)
    critic = Critic(args.signal_len)
    opt_g = torch.optim.Adam(gen.parameters(), lr=args.lr, betas=(0.5, 0.9))
    opt_d = torch.optim.Adam(critic.parameters(), lr=args.lr, betas=(0.5, 0.9))
    out_dir = args.out_dir or tempfile.mkdtemp(prefix="deblur_")

    for epoch in range(args.epochs):
        start = time.time()
        d_meter, g_meter = AverageMeter(), AverageMeter()
        for step, (blurred, sharp) in enumerate(train_loader):
            fake = gen(blurred)
            for _ in range(args.critic_iters):
                opt_d.zero_grad()
                d_real = critic(blurred, sharp).mean()
                d_fake = critic(blurred, fake.detach()).mean()
                gp = gradient_penalty(critic, blurred, sharp, fake.detach())
                d_loss = d_fake - d_real + args.lambda_gp * gp
                d_loss.backward()
                opt_d.step()
            d_meter.update(d_loss.item(), blurred.shape[0])

            opt_g.zero_grad()
            adv = -critic(blurred, fake).mean()
            content = F.mse_loss(fake, sharp)
            g_loss = adv + args.content_weight * content
            g_loss.backward()
            opt_g.step()
            g_meter.update(g_loss.item(), blurred.shape[0])
            if step % args.log_every == 0:
                logger.info("epoch %d step %d d_loss %.4f g_loss %.4f", epoch, step, d_meter.avg, g_meter.avg)

        val_psnr = evaluate(gen, val_loader)
        logger.info("epoch %d done in %.1fs, val PSNR %.2f dB", epoch, time.time() - start, val_psnr)
        save_checkpoint(os.path.join(out_dir, f"epoch_{epoch}.pt"), gen, critic, opt_g, opt_d, epoch)
    return gen


def main():
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(levelname)s %(message)s")
    args = parse_args()
    train(args)
    print("finished")


if __name__ == "__main__":
    main()
