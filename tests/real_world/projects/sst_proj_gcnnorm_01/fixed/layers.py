import torch.nn as nn


class GCNLayer(nn.Module):
    def __init__(self, d_in, d_out):
        super().__init__()
        self.lin = nn.Linear(d_in, d_out)

    def forward(self, x, adj, scale):
        h = self.lin(x) * scale.unsqueeze(1)
        return (adj @ h) * scale.unsqueeze(1)
