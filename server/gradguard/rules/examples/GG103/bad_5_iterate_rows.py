import torch

torch.manual_seed(0)
W = torch.randn(3, 4, requires_grad=True)
x = torch.randn(5, 4)
rows = W * 2
for row in rows:
    row.clamp_(-1.0, 1.0)  # <- GG103
loss = (x @ rows.t()).pow(2).mean()
loss.backward()
