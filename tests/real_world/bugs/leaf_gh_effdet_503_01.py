import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Swish(nn.Module):
    def forward(self, x):
        return x * torch.sigmoid(x)


class Fusefeature(nn.Module):
    def __init__(self, e=1e-4):
        super().__init__()
        self.e = e
        self.weight = nn.Parameter(torch.ones(2, dtype=torch.float32), requires_grad=True)
        self.weight_relu = nn.ReLU(inplace=True)
        self.swish = Swish()

    def forward(self, x):
        weight = self.weight_relu(self.weight)
        weight = weight / (torch.sum(weight, dim=0) + self.e)
        return self.swish(weight[0] * x[0] + weight[1] * x[1])


class TinyBiFPN(nn.Module):
    def __init__(self, c=8):
        super().__init__()
        self.p3 = nn.Conv2d(3, c, 3, padding=1)
        self.p4 = nn.Conv2d(3, c, 3, stride=2, padding=1)
        self.fuse = Fusefeature()
        self.head = nn.Conv2d(c, 1, 1)

    def forward(self, img):
        p3, p4 = self.p3(img), self.p4(img)
        return self.head(self.fuse([p3, F.interpolate(p4, size=p3.shape[-2:], mode="nearest")]))


net = TinyBiFPN()
opt = torch.optim.AdamW(net.parameters(), lr=1e-3)
for _ in range(2):
    loss = net(torch.randn(2, 3, 8, 8)).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
