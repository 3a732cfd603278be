import torch
import torch.nn as nn
import torch.nn.init as init

torch.manual_seed(0)


class L2Norm(nn.Module):
    def __init__(self, n_channels, scale):
        super(L2Norm, self).__init__()
        self.n_channels = n_channels
        self.gamma = scale or None
        self.eps = 1e-10
        self.weight = nn.Parameter(torch.Tensor(self.n_channels))
        self.reset_parameters()

    def reset_parameters(self):
        init.constant_(self.weight, self.gamma)

    def forward(self, x):
        norm = x.pow(2).sum(dim=1, keepdim=True).sqrt() + self.eps
        x = x / norm
        out = self.weight.unsqueeze(0).unsqueeze(2).unsqueeze(3).expand_as(x) * x
        return out


class SSDHead(nn.Module):
    def __init__(self):
        super().__init__()
        self.vgg = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(inplace=True), nn.Conv2d(8, 8, 3, padding=1))
        self.L2Norm = L2Norm(8, 20)
        self.loc = nn.Conv2d(8, 4, 3, padding=1)

    def forward(self, x):
        x = self.vgg(x)
        s = self.L2Norm(x)
        return self.loc(s)


def train(net, optimizer, images, targets, iters=2):
    for iteration in range(iters):
        out = net(images)
        optimizer.zero_grad()
        loss = nn.functional.smooth_l1_loss(out, targets)
        loss.backward()
        optimizer.step()


net = SSDHead()
optimizer = torch.optim.SGD(net.parameters(), lr=1e-3, momentum=0.9)
train(net, optimizer, torch.randn(2, 3, 8, 8), torch.randn(2, 4, 8, 8))
