import torch
from torch import nn

torch.manual_seed(0)
g_in, g_out = nn.Linear(4, 16), nn.Linear(16, 2)
D = nn.Linear(2, 1)
opt_g = torch.optim.Adam([*g_in.parameters(), *g_out.parameters()], lr=1e-3, fused=True)
opt_d = torch.optim.Adam(D.parameters(), lr=1e-3, fused=True)
bce = nn.BCEWithLogitsLoss()
real = torch.randn(8, 2) + 3.0
ones, zeros = torch.ones(8, 1), torch.zeros(8, 1)
for step in range(2):
    fake = g_out(torch.relu(g_in(torch.randn(8, 4))))
    d_loss = bce(D(real), ones) + bce(D(fake.detach()), zeros)
    opt_d.zero_grad()
    d_loss.backward()
    opt_d.step()
    g_loss = bce(D(fake), ones)
    opt_g.zero_grad()
    g_loss.backward()
    opt_g.step()
