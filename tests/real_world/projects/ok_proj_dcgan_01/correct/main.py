import torch

from data import real_batches
from gan_trainer import Trainer
from nets import netD, netG

torch.manual_seed(0)
trainer = Trainer(netG(), netD())
for i, real in enumerate(real_batches()):
    print(i, trainer.step(real))
