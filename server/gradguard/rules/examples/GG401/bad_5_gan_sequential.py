import torch
from torch import nn

torch.manual_seed(0)
G = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 2))
D = nn.Sequential(nn.Linear(2, 16), nn.ReLU(), nn.Linear(16, 1))
opt_g = torch.optim.Adam(G.parameters(), lr=1e-3)
opt_d = torch.optim.Adam(D.parameters(), lr=1e-3)
bce = nn.BCEWithLogitsLoss()
real = torch.randn(8, 2) + 3.0
ones, zeros = torch.ones(8, 1), torch.zeros(8, 1)
for step in range(2):
    fake = G(torch.randn(8, 4))
    d_fake = D(fake)
    g_loss = bce(d_fake, ones)
    opt_g.zero_grad()
    g_loss.backward(retain_graph=True)
    opt_g.step()  # <- GG401
    d_loss = bce(D(real), ones) + bce(d_fake, zeros)
    opt_d.zero_grad()
    d_loss.backward()
    opt_d.step()
