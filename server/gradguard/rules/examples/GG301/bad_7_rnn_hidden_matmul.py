import torch
from torch import nn

torch.manual_seed(0)
T, H = 4, 3
W_hh = nn.Parameter(torch.randn(H, H) * 0.3)
W_xh = nn.Parameter(torch.randn(2, H) * 0.3)
xs = torch.randn(T, 2)
hs = torch.zeros(T + 1, H)
for t in range(T):
    hs[t + 1] = torch.tanh(hs[t] @ W_hh + xs[t] @ W_xh)  # <- GG301
loss = hs[1:].pow(2).mean()
loss.backward()
