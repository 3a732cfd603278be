import torch
from torch import nn

torch.manual_seed(0)


class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv = nn.Conv2d(c, c, 3, padding=1)
        self.bn = nn.BatchNorm2d(c)

    def forward(self, x):
        out = self.bn(self.conv(x)).clone()
        out += x
        return out.relu()


block = Block(4)
block.bn.register_full_backward_hook(lambda module, grad_in, grad_out: None)
block(torch.randn(1, 4, 5, 5)).mean().backward()
