import torch
from torch import nn


class ConvBlock(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 4, kernel_size=3, padding=1)
        self.bn = nn.BatchNorm2d(4)
        self.act = nn.ReLU(inplace=True)
        self.head = nn.Linear(4 * 6 * 6, 2)

    def forward(self, x):
        h = self.act(self.bn(self.conv(x)))
        return self.head(h.flatten(1))


torch.manual_seed(0)
net = ConvBlock()
loss = net(torch.randn(2, 1, 6, 6)).logsumexp(dim=1).mean()
loss.backward()
