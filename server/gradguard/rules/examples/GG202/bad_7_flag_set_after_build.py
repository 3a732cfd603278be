import torch
from torch import nn

torch.manual_seed(0)


class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(4, 6), nn.ReLU(), nn.Dropout(0.2), nn.Linear(6, 1))
        for m in self.modules():  # "save memory": every activation and dropout in place
            if isinstance(m, (nn.ReLU, nn.Dropout)):
                m.inplace = True  # <- GG202

    def forward(self, x):
        return self.body(x)


head = Head()
head(torch.randn(3, 4)).sum().backward()
