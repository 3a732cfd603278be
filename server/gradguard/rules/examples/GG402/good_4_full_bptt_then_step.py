import torch
from torch import nn

torch.manual_seed(0)
w_ih = nn.Linear(2, 4)
w_hh = nn.Linear(4, 4, bias=False)
out = nn.Linear(4, 2)
opt = torch.optim.Adam([*w_ih.parameters(), *w_hh.parameters(), *out.parameters()], lr=1e-2)
text = torch.randn(5, 1, 2)
for epoch in range(2):
    h = torch.zeros(1, 4)
    loss = 0.0
    for t in range(4):
        h = torch.tanh(w_ih(text[t]) + w_hh(h))
        loss = loss + (out(h) - text[t + 1]).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
