import math

import torch
import torch.nn as nn

torch.manual_seed(0)


class Detect(nn.Module):
    stride = None  # strides computed during build

    def __init__(self, nc=80, anchors=(), ch=()):  # detection layer
        super(Detect, self).__init__()
        self.nc = nc  # number of classes
        self.no = nc + 5  # number of outputs per anchor
        self.nl = len(anchors)  # number of detection layers
        self.na = len(anchors[0]) // 2  # number of anchors
        self.m = nn.ModuleList(nn.Conv2d(x, self.no * self.na, 1) for x in ch)  # output conv

    def forward(self, x):
        for i in range(self.nl):
            x[i] = self.m[i](x[i])  # conv
            bs, _, ny, nx = x[i].shape
            x[i] = x[i].view(bs, self.na, self.no, ny, nx).permute(0, 1, 3, 4, 2).contiguous()
        return x


class Model(nn.Module):
    def __init__(self, nc=4, ch=3):
        super(Model, self).__init__()
        self.backbone = nn.ModuleList([
            nn.Sequential(nn.Conv2d(ch, 8, 3, 2, 1), nn.SiLU()),
            nn.Sequential(nn.Conv2d(8, 16, 3, 2, 1), nn.SiLU()),
        ])
        anchors = ([10, 13, 16, 30, 33, 23], [30, 61, 62, 45, 59, 119])
        self.detect = Detect(nc=nc, anchors=anchors, ch=(8, 16))
        self.detect.stride = torch.tensor([2., 4.])
        self._initialize_biases()  # only run once

    def forward(self, x):
        feats = []
        for layer in self.backbone:
            x = layer(x)
            feats.append(x)
        return self.detect(feats)

    def _initialize_biases(self, cf=None):  # initialize biases into Detect(), cf is class frequency
        m = self.detect  # Detect() module
        for mi, s in zip(m.m, m.stride):  # from
            b = mi.bias.view(m.na, -1)  # conv.bias(255) to (3,85)
            with torch.no_grad():
                b[:, 4] += math.log(8 / (640 / s) ** 2)  # obj (8 objects per 640 image)
                b[:, 5:] += math.log(0.6 / (m.nc - 0.99)) if cf is None else torch.log(cf / cf.sum())  # cls
            mi.bias = torch.nn.Parameter(b.view(-1), requires_grad=True)


model = Model()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.937)
imgs = torch.rand(2, 3, 16, 16)
pred = model(imgs)
loss = sum(p[..., 4].sigmoid().mean() for p in pred)
optimizer.zero_grad()
loss.backward()
optimizer.step()
