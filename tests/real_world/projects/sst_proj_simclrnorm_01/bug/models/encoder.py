import torch.nn as nn


class Encoder(nn.Module):
    def __init__(self, d_in=16, d_feat=32):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(d_in, d_feat), nn.BatchNorm1d(d_feat), nn.ReLU(inplace=True))

    def forward(self, x):
        return self.body(x)
