import torch
import torch.nn.functional as F

from models import PatchDiscriminator
from signals import sine_batch


def train(steps=3):
    g = torch.Generator().manual_seed(0)
    disc = PatchDiscriminator()
    opt = torch.optim.Adam(disc.parameters(), lr=2e-4, betas=(0.5, 0.999))
    for step in range(steps):
        real, fake = sine_batch(generator=g)
        logits = torch.cat([disc(real), disc(fake)])
        labels = torch.cat([torch.ones(len(real)), torch.zeros(len(fake))])
        loss = F.binary_cross_entropy_with_logits(logits, labels)
        opt.zero_grad()
        loss.backward()
        opt.step()
        print(step, loss.item())


if __name__ == "__main__":
    torch.manual_seed(0)
    train()
