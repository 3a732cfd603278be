import torch.nn as nn


class PreActBlock(nn.Module):
    def __init__(self, d_in, d_out):
        super().__init__()
        self.bn1, self.bn2 = nn.BatchNorm1d(d_in), nn.BatchNorm1d(d_out)
        self.fc1, self.fc2 = nn.Linear(d_in, d_out), nn.Linear(d_out, d_out)
        self.relu = nn.ReLU(inplace=True)
        self.shortcut = nn.Linear(d_in, d_out, bias=False) if d_in != d_out else None

    def forward(self, x):
        out = self.relu(self.bn1(x))
        shortcut = self.shortcut(out) if self.shortcut is not None else x
        out = self.fc1(out)
        out = self.fc2(self.relu(self.bn2(out)))
        return out + shortcut


class PreActNet(nn.Module):
    def __init__(self, d=12, widths=(16, 16, 24), n_classes=4):
        super().__init__()
        layers, prev = [], d
        for w in widths:
            layers.append(PreActBlock(prev, w))
            prev = w
        self.layers = nn.Sequential(*layers)
        self.linear = nn.Linear(prev, n_classes)

    def forward(self, x):
        return self.linear(self.layers(x))
