import torch.nn as nn


class PreActBlock(nn.Module):
    def __init__(self, d_in, d_out):
        super().__init__()
        self.bn1 = nn.BatchNorm1d(d_in)
        self.fc1 = nn.Linear(d_in, d_out)
        self.bn2 = nn.BatchNorm1d(d_out)
        self.fc2 = nn.Linear(d_out, d_out)
        self.act = nn.ReLU(inplace=True)
        self.shortcut = nn.Linear(d_in, d_out, bias=False) if d_in != d_out else nn.Identity()

    def forward(self, x):
        out = self.bn1(x)
        shortcut = self.shortcut(out)
        out = self.act(out)
        out = self.fc1(out)
        out = self.fc2(self.act(self.bn2(out)))
        return out + shortcut


class PreActNet(nn.Module):
    def __init__(self, d=12, widths=(16, 16, 24), n_classes=4):
        super().__init__()
        blocks, prev = [], d
        for w in widths:
            blocks.append(PreActBlock(prev, w))
            prev = w
        self.blocks = nn.Sequential(*blocks)
        self.head = nn.Linear(prev, n_classes)

    def forward(self, x):
        return self.head(self.blocks(x))
