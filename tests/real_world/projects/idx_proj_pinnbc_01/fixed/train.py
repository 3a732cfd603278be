import torch

from pinn.boundary import impose_initial_condition
from pinn.net import mlp
from pinn.physics import burgers_residual

torch.manual_seed(0)
net = mlp()
opt = torch.optim.Adam(net.parameters(), lr=1e-3)
xt = torch.rand(64, 2) * torch.tensor([2.0, 1.0]) - torch.tensor([1.0, 0.0])
xt[:16, 1] = 0.0
t0_mask = xt[:, 1] == 0
xt.requires_grad_(True)
for it in range(3):
    u = net(xt)
    res = burgers_residual(u, xt)
    u = impose_initial_condition(u, xt.detach(), t0_mask)
    loss = (res ** 2).mean() + (u ** 2).mean() * 0.0
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(it, loss.item())
