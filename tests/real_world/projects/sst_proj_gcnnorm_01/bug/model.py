import torch
import torch.nn as nn

from graph import degree_scale
from layers import GCNLayer


class GCN(nn.Module):
    def __init__(self, d_in=6, hidden=16, n_classes=3):
        super().__init__()
        self.conv1 = GCNLayer(d_in, hidden)
        self.conv2 = GCNLayer(hidden, n_classes)

    def forward(self, x, adj):
        scale = degree_scale(adj)
        h = torch.relu(self.conv1(x, adj, scale))
        scale.masked_fill_(torch.isinf(scale), 0.0)
        return self.conv2(h, adj, scale)
