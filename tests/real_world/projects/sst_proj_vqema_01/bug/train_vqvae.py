import torch
import torch.nn as nn

from vq import Quantize

torch.manual_seed(0)
enc, dec, vq = nn.Linear(12, 8), nn.Linear(8, 12), Quantize()
opt = torch.optim.Adam([*enc.parameters(), *dec.parameters()], lr=1e-3)
data = torch.randn(64, 12)
for i in range(3):
    q, latent_loss = vq(enc(data))
    loss = (dec(q) - data).pow(2).mean() + 0.25 * latent_loss
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(i, loss.item())
