import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


# implementation 1
class ResidualUnitA(nn.Module):
    def __init__(self):
        super(ResidualUnitA, self).__init__()
        self.conv_0 = nn.Conv2d(3, 24, 3, padding=1, bias=False)
        self.bn_0 = nn.BatchNorm2d(24)
        self.conv_1 = nn.Conv2d(24, 24, 3, padding=1, bias=False)
        self.bn_1 = nn.BatchNorm2d(24)

    def forward(self, x):
        x = self.conv_0(x)
        x = self.bn_0(x)
        x = F.relu(x, inplace=True)

        residual = self.conv_1(x)
        residual = self.bn_1(residual)
        x += residual
        x = F.relu(x, inplace=True)

        return x


model = ResidualUnitA()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
inputs = torch.randn(2, 3, 8, 8)
target = torch.randn(2, 24, 8, 8)

for step in range(2):
    optimizer.zero_grad()
    loss = F.mse_loss(model(inputs), target)
    loss.backward()
    optimizer.step()
