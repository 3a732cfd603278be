import torch.nn as nn


class ConvBlock(nn.Sequential):
    def __init__(self, c_in, c_out):
        super().__init__(nn.Conv2d(c_in, c_out, 3, padding=1), nn.BatchNorm2d(c_out), nn.LeakyReLU(0.2))


class Generator(nn.Module):
    def __init__(self, nfc=8):
        super().__init__()
        self.head = ConvBlock(3, nfc)
        self.tail = nn.Sequential(nn.Conv2d(nfc, 3, 3, padding=1), nn.Tanh())

    def forward(self, noise, prev):
        return self.tail(self.head(noise + prev)) + prev


class Discriminator(nn.Module):
    def __init__(self, nfc=8):
        super().__init__()
        self.body = nn.Sequential(ConvBlock(3, nfc), nn.Conv2d(nfc, 1, 3, padding=1))

    def forward(self, x):
        return self.body(x)
