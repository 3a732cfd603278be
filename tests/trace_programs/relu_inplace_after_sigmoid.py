# expect-kind: stale-save
import torch
from torch import nn


class Gate(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.act = nn.ReLU(inplace=True)

    def forward(self, x):
        g = torch.sigmoid(self.fc(x))  # expect: save
        return self.act(g)  # expect: write


model = Gate()
out = model(torch.rand(2, 4))
out.sum().backward()
