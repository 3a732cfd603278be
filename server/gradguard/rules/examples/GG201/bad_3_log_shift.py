import torch

torch.manual_seed(0)
raw = torch.randn(6, requires_grad=True)
p = raw.sigmoid() * 0.98 + 0.01
logp = torch.log(p)
p.add_(1e-3)  # <- GG201
loss = -(p * logp).sum()
loss.backward()
