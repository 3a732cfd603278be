# ../gan_wrong_order.py with the advice the tracer used to give applied: every backward() before the steps. It
# runs, and D's step absorbs G's loss gradient (g_loss.backward() fills D's .grad too).
import torch
from torch import nn

torch.manual_seed(0)
G = nn.Sequential(nn.Linear(2, 8), nn.ReLU(), nn.Linear(8, 2))
D = nn.Sequential(nn.Linear(2, 8), nn.ReLU(), nn.Linear(8, 1))
opt_g = torch.optim.Adam(G.parameters(), lr=1e-3)
opt_d = torch.optim.Adam(D.parameters(), lr=1e-3)
bce = nn.BCEWithLogitsLoss()
real = torch.randn(16, 2)
ones, zeros = torch.ones(16, 1), torch.zeros(16, 1)
for step in range(2):
    fake = G(torch.randn(16, 4)[:, :2])
    d_fake = D(fake)
    g_loss = bce(d_fake, ones)
    d_loss = bce(D(real), ones) + bce(d_fake, zeros)
    opt_g.zero_grad()
    opt_d.zero_grad()
    g_loss.backward(retain_graph=True)
    d_loss.backward()
    opt_g.step()
    opt_d.step()
