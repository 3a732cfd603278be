import copy

import torch
from torch import nn

torch.manual_seed(0)
g_in, g_out = nn.Linear(4, 16), nn.Linear(16, 2)
D = nn.Linear(2, 1)
opt_g = torch.optim.Adam([*g_in.parameters(), *g_out.parameters()], lr=0.1, fused=True)
bce = nn.BCEWithLogitsLoss()
z = torch.randn(8, 4)
ones, zeros = torch.ones(8, 1), torch.zeros(8, 1)
ref_in, ref_out = copy.deepcopy(g_in), copy.deepcopy(g_out)
fake = g_out(torch.relu(g_in(z)))
d_fake = D(fake)
g_loss = bce(d_fake, ones)
g_loss.backward(retain_graph=True)
opt_g.step()  # <- GG502
opt_g.zero_grad()
d_loss = bce(d_fake, zeros)
d_loss.backward()

ref_loss = bce(D(ref_out(torch.relu(ref_in(z)))), zeros)
true_grad, = torch.autograd.grad(ref_loss, ref_in.weight)
if not torch.allclose(g_in.weight.grad, true_grad):
    print("wrong gradient:", (g_in.weight.grad - true_grad).abs().max().item())
