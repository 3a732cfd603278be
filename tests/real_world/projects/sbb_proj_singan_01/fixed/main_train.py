import torch

from singan.models import Discriminator, Generator
from singan.training import train_single_scale

torch.manual_seed(0)
real = torch.rand(1, 3, 12, 12) * 2 - 1
print(train_single_scale(Generator(), Discriminator(), real))
