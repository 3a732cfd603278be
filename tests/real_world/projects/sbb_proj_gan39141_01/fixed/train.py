import torch

from data import artist_works
from models import discriminator, generator
from trainer import GANTrainer

torch.manual_seed(0)
g = torch.Generator().manual_seed(0)
trainer = GANTrainer(generator(), discriminator())
for step in range(3):
    print(step, trainer.train_step(artist_works(generator=g)))
