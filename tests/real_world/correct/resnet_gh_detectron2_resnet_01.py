import torch
import torch.nn.functional as F
from torch import nn

torch.manual_seed(0)


class Conv2d(nn.Conv2d):
    def __init__(self, *args, norm=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.norm = norm

    def forward(self, x):
        x = super().forward(x)
        if self.norm is not None:
            x = self.norm(x)
        return x


class BottleneckBlock(nn.Module):
    def __init__(self, in_channels, out_channels, *, bottleneck_channels, stride=1):
        super().__init__()
        if in_channels != out_channels:
            self.shortcut = Conv2d(in_channels, out_channels, kernel_size=1, stride=stride, bias=False,
                                   norm=nn.BatchNorm2d(out_channels))
        else:
            self.shortcut = None
        self.conv1 = Conv2d(in_channels, bottleneck_channels, kernel_size=1, bias=False,
                            norm=nn.BatchNorm2d(bottleneck_channels))
        self.conv2 = Conv2d(bottleneck_channels, bottleneck_channels, kernel_size=3, stride=stride, padding=1,
                            bias=False, norm=nn.BatchNorm2d(bottleneck_channels))
        self.conv3 = Conv2d(bottleneck_channels, out_channels, kernel_size=1, bias=False,
                            norm=nn.BatchNorm2d(out_channels))

    def forward(self, x):
        out = self.conv1(x)
        out = F.relu_(out)

        out = self.conv2(out)
        out = F.relu_(out)

        out = self.conv3(out)

        if self.shortcut is not None:
            shortcut = self.shortcut(x)
        else:
            shortcut = x

        out += shortcut
        out = F.relu_(out)
        return out


class BasicStem(nn.Module):
    def __init__(self, in_channels=3, out_channels=8):
        super().__init__()
        self.conv1 = Conv2d(in_channels, out_channels, kernel_size=7, stride=2, padding=3, bias=False,
                            norm=nn.BatchNorm2d(out_channels))

    def forward(self, x):
        x = self.conv1(x)
        x = F.relu_(x)
        x = F.max_pool2d(x, kernel_size=3, stride=2, padding=1)
        return x


model = nn.Sequential(BasicStem(), BottleneckBlock(8, 16, bottleneck_channels=4),
                      BottleneckBlock(16, 16, bottleneck_channels=4))
opt = torch.optim.SGD(model.parameters(), lr=0.02, momentum=0.9)
for _ in range(2):
    opt.zero_grad()
    loss = model(torch.randn(2, 3, 16, 16)).mean()
    loss.backward()
    opt.step()
