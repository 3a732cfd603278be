import torch
import torch.nn as nn

from moe import MoELayer, TokenDispatcher

torch.manual_seed(0)
dispatcher = TokenDispatcher(n_experts=4, capacity=16, dim=8)
model = nn.Sequential(MoELayer(dispatcher), MoELayer(dispatcher), nn.Linear(8, 1))
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
tokens = torch.randn(24, 8)
target = tokens.sum(dim=1, keepdim=True)
for step in range(3):
    loss = ((model(tokens) - target) ** 2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(step, loss.item())
