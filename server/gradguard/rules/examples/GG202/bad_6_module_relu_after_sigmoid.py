import torch
from torch import nn


class GateNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 8)
        self.act = nn.ReLU(inplace=True)
        self.out = nn.Linear(8, 1)

    def forward(self, x):
        h = torch.sigmoid(self.fc(x))
        h = self.act(h)  # <- GG202
        return self.out(h)


torch.manual_seed(0)
model = GateNet()
loss = model(torch.randn(3, 4)).pow(2).mean()
loss.backward()
