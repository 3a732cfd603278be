import torch

from model import VAE, Discriminator
from solver import Solver

torch.manual_seed(0)
solver = Solver(VAE(), Discriminator())
data = torch.randn(64, 12)
for it in range(3):
    idx = torch.randperm(64)
    print(it, solver.step(data[idx[:16]], data[idx[16:32]]))
