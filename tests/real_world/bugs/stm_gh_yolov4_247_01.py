import torch
import torch.nn as nn

torch.manual_seed(0)


class Convolutional(nn.Module):
    def __init__(self, filters_in, filters_out, kernel_size, stride=1, norm="bn", activate="relu"):
        super(Convolutional, self).__init__()
        self.__conv = nn.Conv2d(filters_in, filters_out, kernel_size, stride, kernel_size // 2, bias=not norm)
        self.__norm = nn.BatchNorm2d(filters_out)
        if activate == "relu":
            self.__activate = nn.ReLU(inplace=True)
        else:
            self.__activate = nn.LeakyReLU(negative_slope=0.1, inplace=True)

    def forward(self, x):
        return self.__activate(self.__norm(self.__conv(x)))


class CSPBlock(nn.Module):
    def __init__(self, in_channels, out_channels, hidden_channels=None, residual_activation="linear"):
        super(CSPBlock, self).__init__()
        if hidden_channels is None:
            hidden_channels = out_channels
        self.block = nn.Sequential(
            Convolutional(in_channels, hidden_channels, 1),
            Convolutional(hidden_channels, out_channels, 3),
        )

    def forward(self, x):
        residual = x
        out = self.block(x)
        out += residual
        return out


model = nn.Sequential(Convolutional(3, 4, 3), CSPBlock(4, 4), CSPBlock(4, 4), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(4, 2))
optimizer = torch.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9)
for _ in range(2):
    loss = nn.functional.cross_entropy(model(torch.rand(2, 3, 8, 8)), torch.tensor([0, 1]))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
