import torch
from torch import nn

torch.manual_seed(0)
G = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
D = nn.Sequential(nn.Linear(2, 8), nn.ReLU(), nn.Linear(8, 1))
opt_g = torch.optim.Adam(G.parameters(), lr=1e-3)
opt_d = torch.optim.Adam(D.parameters(), lr=1e-3)
bce = nn.BCEWithLogitsLoss()
real = torch.randn(8, 2)
ones, zeros = torch.ones(8, 1), torch.zeros(8, 1)
for step in range(3):
    fake = G(torch.randn(8, 4))
    d_loss = bce(D(real), ones) + bce(D(fake.detach()), zeros)  # D's own loss stops at D
    opt_d.zero_grad()
    d_loss.backward()
    opt_d.step()
    g_loss = bce(D(fake), ones)  # G's loss sees D's new weights
    opt_g.zero_grad()
    g_loss.backward()
    opt_g.step()
