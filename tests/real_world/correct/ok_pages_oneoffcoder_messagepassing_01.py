import torch
from torch import nn

torch.manual_seed(0)
device = torch.device('cpu')

x = torch.tensor([
    [1.0, 0.0],
    [0.8, 0.2],
    [0.0, 1.0],
    [0.2, 0.9],
], device=device)
edge_index = torch.tensor([
    [0, 1, 1, 2, 2, 3],
    [1, 0, 2, 1, 3, 2],
], dtype=torch.long, device=device)


def aggregate_sum(x, edge_index):
    source, destination = edge_index
    out = torch.zeros_like(x)
    out.index_add_(0, destination, x[source])
    return out


def aggregate_mean(x, edge_index):
    source, destination = edge_index
    summed = aggregate_sum(x, edge_index)
    degree = torch.zeros(x.shape[0], device=x.device)
    degree.index_add_(0, destination, torch.ones_like(destination, dtype=x.dtype))
    return summed / degree.clamp_min(1).unsqueeze(1)


class MessagePassingLayer(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.self_linear = nn.Linear(in_features, out_features)
        self.neighbor_linear = nn.Linear(in_features, out_features)

    def forward(self, x, edge_index):
        neighbors = aggregate_mean(x, edge_index)
        return torch.relu(self.self_linear(x) + self.neighbor_linear(neighbors))


class TinyGNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer1 = MessagePassingLayer(2, 5)
        self.layer2 = MessagePassingLayer(5, 5)
        self.head = nn.Linear(5, 2)

    def forward(self, x, edge_index):
        h = self.layer1(x, edge_index)
        h = self.layer2(h, edge_index)
        return self.head(h)


model = TinyGNN().to(device)
labels = torch.tensor([0, 0, 1, 1], device=device)
optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
for epoch in range(5):
    optimizer.zero_grad()
    loss = nn.functional.cross_entropy(model(x, edge_index), labels)
    loss.backward()
    optimizer.step()
