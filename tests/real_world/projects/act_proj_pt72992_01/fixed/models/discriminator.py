import torch.nn as nn

from .layers import conv_block


class PatchDiscriminator(nn.Module):
    def __init__(self, channels=2, width=8):
        super().__init__()
        self.block1 = conv_block(channels, width)
        self.block2 = conv_block(width, width)
        self.head = nn.Conv1d(width, 1, 1)

    def forward(self, x):
        h = self.block1(x)
        h = self.block2(h)
        return self.head(h).mean(dim=(1, 2))
