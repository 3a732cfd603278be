import torch
from torch import nn

torch.manual_seed(0)
model = nn.Sequential(
    nn.Linear(4, 8),
    nn.ReLU(inplace=True),
    nn.Linear(8, 8),
    nn.LeakyReLU(0.1, inplace=True),
    nn.Linear(8, 1),
    nn.Sigmoid(),
)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(16, 4), torch.rand(16, 1)
for epoch in range(3):
    opt.zero_grad()
    loss = nn.functional.binary_cross_entropy(model(x), y)
    loss.backward()
    opt.step()
