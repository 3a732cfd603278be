import torch
from torch import nn

torch.manual_seed(0)
G = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 2))
D = nn.Sequential(nn.Linear(2, 8), nn.ReLU(), nn.Linear(8, 1))
opt_d = torch.optim.Adam(D.parameters(), lr=0.1, fused=True)
bce = nn.BCEWithLogitsLoss()
z, real = torch.randn(8, 4), torch.randn(8, 2)
ones, zeros = torch.ones(8, 1), torch.zeros(8, 1)
fake = G(z)
d_fake = D(fake)
d_loss = bce(D(real), ones) + bce(d_fake, zeros)
d_loss.backward(retain_graph=True)
opt_d.step()  # <- GG502
G.zero_grad()
g_loss = bce(d_fake, ones)
g_loss.backward()

# G's gradient through D as it is now (the textbook loop runs D(fake) again after D's step)
true_grad, = torch.autograd.grad(bce(D(G(z)), ones), G[0].weight)
if not torch.allclose(G[0].weight.grad, true_grad):
    print("wrong gradient:", (G[0].weight.grad - true_grad).abs().max().item())
