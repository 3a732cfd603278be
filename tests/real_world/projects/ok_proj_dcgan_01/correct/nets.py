import torch.nn as nn


def netG(nz=4, out=12):
    return nn.Sequential(nn.Linear(nz, 32), nn.BatchNorm1d(32), nn.ReLU(True), nn.Linear(32, out), nn.Tanh())


def netD(inp=12):
    return nn.Sequential(nn.Linear(inp, 32), nn.LeakyReLU(0.2, inplace=True), nn.Linear(32, 1))
