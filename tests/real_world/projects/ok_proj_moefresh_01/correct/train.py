import torch

from moe import MoE

torch.manual_seed(0)
model = torch.nn.Sequential(MoE(), MoE(), torch.nn.Linear(8, 1))
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
x = torch.randn(24, 8)
y = x.sum(1, keepdim=True)
for step in range(3):
    loss = ((model(x) - y) ** 2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(step, loss.item())
