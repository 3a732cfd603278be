import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Mish(nn.Module):
    def forward(self, x):
        return x * torch.tanh(F.softplus(x))


class light_Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.dense1 = nn.Sequential(nn.Conv2d(3, 16, 3, stride=2, padding=1), nn.BatchNorm2d(16), Mish())
        self.transition1 = nn.Sequential(nn.Conv2d(16, 16, 1), nn.AvgPool2d(2), nn.BatchNorm2d(16))
        self.avg_pool = nn.AvgPool2d(kernel_size=2, stride=2)
        self.conv = nn.Conv2d(in_channels=16, out_channels=42, kernel_size=1)
        self.relu = nn.ReLU()

    def forward(self, inputs):
        x = self.dense1(inputs)
        x = self.transition1(x)
        x = self.avg_pool(x)
        x = self.conv(x)
        x = self.relu(x)
        x[x > 1.] = 1.
        x = torch.reshape(x, (-1, 21, 2))
        return x


model = light_Model()
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
for _ in range(2):
    images, keypoints = torch.randn(2, 3, 8, 8), torch.rand(2, 21, 2)
    loss = F.l1_loss(model(images), keypoints)
    opt.zero_grad()
    loss.backward()
    opt.step()
