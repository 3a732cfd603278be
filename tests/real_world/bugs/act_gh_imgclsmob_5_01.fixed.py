import torch
import torch.nn as nn

torch.manual_seed(0)


class SqnxtConv(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride, padding=(0, 0)):
        super(SqnxtConv, self).__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, stride=stride, padding=padding)
        self.bn = nn.BatchNorm2d(out_channels)
        self.activ = nn.ReLU(inplace=True)

    def forward(self, x):
        x = self.conv(x)
        x = self.bn(x)
        x = self.activ(x)
        return x


class SqnxtUnit(nn.Module):
    def __init__(self, in_channels, out_channels, stride):
        super(SqnxtUnit, self).__init__()
        reduction_den = 4 if stride == 2 else 2
        self.resize_identity = (in_channels != out_channels) or (stride != 1)
        self.conv1 = SqnxtConv(in_channels, in_channels // reduction_den, 1, stride)
        self.conv2 = SqnxtConv(in_channels // reduction_den, out_channels, 3, 1, padding=(1, 1))
        if self.resize_identity:
            self.identity_conv = SqnxtConv(in_channels, out_channels, 1, stride)
        self.activ = nn.ReLU(inplace=True)

    def forward(self, x):
        if self.resize_identity:
            identity = self.identity_conv(x)
        else:
            identity = x
        identity = torch.nn.functional.relu(identity, inplace=False)
        x = self.conv1(x)
        x = self.conv2(x)
        x = x + identity
        x = self.activ(x)
        return x


net = nn.Sequential(SqnxtConv(3, 8, 3, 1, (1, 1)), SqnxtUnit(8, 16, 2), SqnxtUnit(16, 16, 1))
out = net(torch.randn(2, 3, 8, 8))
out.mean().backward()
