import torch
import torch.nn as nn

torch.manual_seed(0)


class DwsConv(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size=3, stride=1, padding=1):
        super(DwsConv, self).__init__()
        self.dw_conv = nn.Conv2d(in_channels, in_channels, kernel_size, stride, padding, groups=in_channels, bias=False)
        self.pw_conv = nn.Conv2d(in_channels, out_channels, 1, bias=False)

    def forward(self, x):
        return self.pw_conv(self.dw_conv(x))


class DwsConvBlock(nn.Module):
    def __init__(self, in_channels, out_channels, activate):
        super(DwsConvBlock, self).__init__()
        self.activate = activate
        if self.activate:
            self.activ = nn.ReLU(inplace=False)
        self.conv = DwsConv(in_channels, out_channels)
        self.bn = nn.BatchNorm2d(out_channels)

    def forward(self, x):
        if self.activate:
            x = self.activ(x)
        x = self.conv(x)
        x = self.bn(x)
        return x


class XceptionUnit(nn.Module):
    def __init__(self, in_channels, out_channels, stride, reps, start_with_relu=True):
        super(XceptionUnit, self).__init__()
        self.resize_identity = (in_channels != out_channels) or (stride != 1)
        if self.resize_identity:
            self.identity_conv = nn.Conv2d(in_channels, out_channels, 1, stride=stride, bias=False)
            self.identity_bn = nn.BatchNorm2d(out_channels)
        self.body = nn.Sequential()
        for i in range(reps):
            self.body.add_module("block{}".format(i + 1), DwsConvBlock(
                in_channels if i == 0 else out_channels, out_channels, activate=(start_with_relu or i != 0)))
        if stride != 1:
            self.body.add_module("pool", nn.MaxPool2d(3, stride, 1))

    def forward(self, x):
        if self.resize_identity:
            identity = self.identity_bn(self.identity_conv(x))
        else:
            identity = x
        x = self.body(x)
        x = x + identity
        return x


net = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), XceptionUnit(4, 8, 2, reps=2), XceptionUnit(8, 8, 1, reps=2))
criterion = nn.CrossEntropyLoss()
out = net(torch.randn(2, 3, 8, 8)).mean((2, 3))
loss = criterion(out, torch.tensor([1, 3]))
loss.backward()
