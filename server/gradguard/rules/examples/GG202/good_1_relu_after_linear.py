import torch
from torch import nn


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 8)
        self.bn = nn.BatchNorm1d(8)
        self.act = nn.ReLU(inplace=True)
        self.out = nn.Linear(8, 1)

    def forward(self, x):
        h = self.act(self.bn(self.fc(x)))
        return self.out(h)


torch.manual_seed(0)
model = MLP()
loss = model(torch.randn(3, 4)).pow(2).mean()
loss.backward()
