import torch
from torch import nn

torch.manual_seed(0)
T, H = 4, 3
lin_h = nn.Linear(H, H)
lin_x = nn.Linear(2, H)
xs = torch.randn(T, 2)
hs = torch.zeros(T + 1, H)
for t in range(T):
    hs[t + 1] = torch.tanh(lin_h(hs[t]) + lin_x(xs[t]))  # <- GG301
loss = hs[1:].pow(2).mean()
loss.backward()
