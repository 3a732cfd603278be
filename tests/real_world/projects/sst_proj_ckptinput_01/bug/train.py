import torch

from model import CheckpointedStack

torch.manual_seed(0)
model = CheckpointedStack()
head = torch.nn.Linear(16, 1)
opt = torch.optim.Adam([*model.parameters(), *head.parameters()], lr=1e-3)
x = torch.randn(8, 16)
y = torch.randn(8, 1)
for step in range(3):
    loss = ((head(model(x)) - y) ** 2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(step, loss.item())
