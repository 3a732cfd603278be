import torch
import torch.nn.functional as F
from torch import Tensor

torch.manual_seed(0)


class SAGEConv(torch.nn.Module):
    """Mean-aggregation GraphSAGE layer (reduced from torch_geometric.nn.SAGEConv)."""

    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.lin_l = torch.nn.Linear(in_channels, out_channels)
        self.lin_r = torch.nn.Linear(in_channels, out_channels, bias=False)

    def forward(self, x, edge_index):
        src, dst = edge_index
        agg = torch.zeros(x.size(0), x.size(1)).index_add_(0, dst, x[src])
        deg = torch.zeros(x.size(0)).index_add_(0, dst, torch.ones(dst.numel())).clamp_(min=1)
        return self.lin_l(agg / deg.unsqueeze(1)) + self.lin_r(x)


class SAGE(torch.nn.Module):
    def __init__(self, in_channels, hidden_channels, out_channels):
        super().__init__()
        self.convs = torch.nn.ModuleList()
        self.convs.append(SAGEConv(in_channels, hidden_channels))
        self.convs.append(SAGEConv(hidden_channels, out_channels))

    def forward(self, x: Tensor, edge_index: Tensor) -> Tensor:
        for i, conv in enumerate(self.convs):
            x = conv(x, edge_index)
            if i < len(self.convs) - 1:
                x = x.relu_()
                x = F.dropout(x, p=0.5, training=self.training)
        return x


model = SAGE(5, 8, 3)
optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
x = torch.randn(6, 5)
edge_index = torch.tensor([[0, 1, 2, 3, 4, 5, 1], [1, 2, 3, 4, 5, 0, 0]])
y = torch.tensor([0, 1, 2, 0, 1, 2])


def train():
    model.train()
    optimizer.zero_grad()
    out = model(x, edge_index)
    loss = F.cross_entropy(out, y)
    loss.backward()
    optimizer.step()
    return float(loss)


for epoch in range(2):
    train()
