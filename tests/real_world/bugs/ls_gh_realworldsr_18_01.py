#!/usr/bin/env python
"""Train a small 2x super-resolution GAN (SRGAN-style) on synthetic textures.

Everything runs on the CPU in a few seconds; the data is generated on the fly.
"""
import argparse
import json
import logging
import os
import random
import shutil
import tempfile

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

log = logging.getLogger(__name__)


def get_parser():
    parser = argparse.ArgumentParser()
    parser.add_argument("--num-images", type=int, default=48)
    parser.add_argument("--hr-size", type=int, default=16)
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--num-epochs", type=int, default=1)
    parser.add_argument("--lr-g", type=float, default=1e-4)
    parser.add_argument("--lr-d", type=float, default=1e-4)
    parser.add_argument("--adv-weight", type=float, default=1e-3)
    parser.add_argument("--num-blocks", type=int, default=2)
    parser.add_argument("--channels", type=int, default=8)
    parser.add_argument("--save-dir", type=str, default="")
    parser.add_argument("--seed", type=int, default=123)
    return parser


def make_textures(n, size, seed):
    g = torch.Generator().manual_seed(seed)
    xs = torch.linspace(0, 1, size)
    yy, xx = torch.meshgrid(xs, xs, indexing="ij")
    freq = torch.rand(n, 1, 1, generator=g) * 10 + 2
    phase = torch.rand(n, 1, 1, generator=g) * 6.28
    hr = torch.sin(freq * xx + phase) * torch.cos(freq * yy)
    hr = hr.unsqueeze(1)
    lr = F.avg_pool2d(hr, 2)
    return lr, hr


class ResidualBlock(nn.Module):
    def __init__(self, ch):
        super().__init__()
        self.conv1 = nn.Conv2d(ch, ch, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(ch)
        self.prelu = nn.PReLU()
        self.conv2 = nn.Conv2d(ch, ch, 3, padding=1)
        self.bn2 = nn.BatchNorm2d(ch)

    def forward(self, x):
        r = self.prelu(self.bn1(self.conv1(x)))
        r = self.bn2(self.conv2(r))
        return x + r


class SRGenerator(nn.Module):
    def __init__(self, ch, num_blocks):
        super().__init__()
        self.head = nn.Sequential(nn.Conv2d(1, ch, 5, padding=2), nn.PReLU())
        self.body = nn.Sequential(*[ResidualBlock(ch) for _ in range(num_blocks)])
        self.up = nn.Sequential(nn.Conv2d(ch, ch * 4, 3, padding=1), nn.PixelShuffle(2), nn.PReLU())
        self.tail = nn.Conv2d(ch, 1, 5, padding=2)

    def forward(self, x):
        h = self.head(x)
        h = h + self.body(h)
        return torch.tanh(self.tail(self.up(h)))


class Discriminator(nn.Module):
    def __init__(self, ch):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, ch, 3, padding=1), nn.LeakyReLU(0.2),
            nn.Conv2d(ch, ch, 3, stride=2, padding=1), nn.BatchNorm2d(ch), nn.LeakyReLU(0.2),
            nn.Conv2d(ch, 2 * ch, 3, stride=2, padding=1), nn.BatchNorm2d(2 * ch), nn.LeakyReLU(0.2),
        )
        self.classifier = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(2 * ch, 1))

    def forward(self, x):
        return self.classifier(self.features(x))


def psnr(sr, hr):
    mse = F.mse_loss(sr, hr)
    return (10 * torch.log10(4.0 / mse)).item()


def validate(netG, loader):
    netG.eval()
    scores = []
    with torch.no_grad():
        for lr, hr in loader:
            scores.append(psnr(netG(lr), hr))
    netG.train()
    return sum(scores) / len(scores)


def main(argv=None):
    args = get_parser().parse_args(argv if argv is not None else [])
    random.seed(args.seed)
    torch.manual_seed(args.seed)
    save_dir = args.save_dir or tempfile.mkdtemp(prefix="srgan_")

    lr_imgs, hr_imgs = make_textures(args.num_images, args.hr_size, seed=args.seed)
    split = int(0.75 * args.num_images)
    train_loader = DataLoader(TensorDataset(lr_imgs[:split], hr_imgs[:split]), batch_size=args.batch_size, shuffle=True)
    val_loader = DataLoader(TensorDataset(lr_imgs[split:], hr_imgs[split:]), batch_size=args.batch_size)

    netG = SRGenerator(args.channels, args.num_blocks)
    netD = Discriminator(args.channels)
    optimizerG = torch.optim.Adam(netG.parameters(), lr=args.lr_g)
    optimizerD = torch.optim.Adam(netD.parameters(), lr=args.lr_d)
    bce = nn.BCEWithLogitsLoss()
    history = []

    for epoch in range(1, args.num_epochs + 1):
        running = {"d_loss": 0.0, "g_loss": 0.0, "batches": 0}
        for lr, hr in train_loader:
            real_label = torch.ones(lr.shape[0], 1)
            fake_label = torch.zeros(lr.shape[0], 1)
            sr = netG(lr)
            fake_out = netD(sr)

            # (1) update D: maximise log(D(hr)) + log(1 - D(G(lr)))
            d_loss = bce(netD(hr), real_label) + bce(netD(sr.detach()), fake_label)
            optimizerD.zero_grad()
            d_loss.backward()
            optimizerD.step()

            # (2) update G: content loss + adversarial loss
            adversarial = bce(fake_out, real_label)
            content = F.mse_loss(sr, hr)
            g_loss = content + args.adv_weight * adversarial
            optimizerG.zero_grad()
            g_loss.backward()
            optimizerG.step()

            running["d_loss"] += d_loss.item()
            running["g_loss"] += g_loss.item()
            running["batches"] += 1

        val_psnr = validate(netG, val_loader)
        stats = {k: v / running["batches"] for k, v in running.items() if k != "batches"}
        stats.update(epoch=epoch, psnr=val_psnr)
        history.append(stats)
        log.info("epoch %d: %s", epoch, json.dumps(stats))
        torch.save(netG.state_dict(), os.path.join(save_dir, f"netG_epoch_{epoch}.pth"))
        torch.save(netD.state_dict(), os.path.join(save_dir, f"netD_epoch_{epoch}.pth"))

    with open(os.path.join(save_dir, "history.json"), "w") as f:
        json.dump(history, f)
    if not args.save_dir:
        shutil.rmtree(save_dir, ignore_errors=True)
    return history


if __name__ == "__main__":
    logging.basicConfig(level=logging.WARNING)
    main()
