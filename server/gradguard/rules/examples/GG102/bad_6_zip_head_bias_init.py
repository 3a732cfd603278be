import math

import torch
from torch import nn


class Detect(nn.Module):
    def __init__(self, nc=4, na=3, ch=(8, 16)):
        super().__init__()
        self.nc, self.na, self.no = nc, na, nc + 5
        self.m = nn.ModuleList(nn.Conv2d(c, self.no * self.na, 1) for c in ch)
        self.stride = torch.tensor([8.0, 16.0])
        self._initialize_biases()

    def _initialize_biases(self):
        for mi, s in zip(self.m, self.stride):
            b = mi.bias.view(self.na, -1)
            b[:, 4] += math.log(8 / (640 / s) ** 2)  # <- GG102

    def forward(self, xs):
        return [conv(x) for conv, x in zip(self.m, xs)]


torch.manual_seed(0)
head = Detect()
outs = head([torch.randn(1, 8, 4, 4), torch.randn(1, 16, 2, 2)])
sum(o.mean() for o in outs).backward()
