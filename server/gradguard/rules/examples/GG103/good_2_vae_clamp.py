import torch
from torch import nn

torch.manual_seed(0)
encoder = nn.Linear(6, 4)
x = torch.randn(3, 6)
mu, logvar = encoder(x).split(2, dim=1)
logvar = logvar.clamp(-5.0, 5.0)
z = mu + torch.randn_like(mu) * torch.exp(0.5 * logvar)
kl = -0.5 * torch.mean(1 + logvar - mu.pow(2) - logvar.exp())
loss = z.pow(2).mean() + kl
loss.backward()
