import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class GatedFeatures(nn.Module):
    def __init__(self, dim=8, floor=0.05):
        super().__init__()
        self.gate = nn.Linear(dim, dim)
        self.value = nn.Linear(dim, dim)
        self.floor = floor

    def forward(self, x):
        gates = torch.sigmoid(self.gate(x))
        gates = gates.contiguous()
        gates.clamp_(min=self.floor)
        return gates * self.value(x)


layer = GatedFeatures()
head = nn.Linear(8, 2)
opt = torch.optim.Adam(list(layer.parameters()) + list(head.parameters()), lr=1e-3)
for _ in range(2):
    loss = F.cross_entropy(head(layer(torch.randn(4, 8))), torch.randint(0, 2, (4,)))
    opt.zero_grad()
    loss.backward()
    opt.step()
