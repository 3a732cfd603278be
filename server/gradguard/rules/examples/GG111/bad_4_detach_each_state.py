import torch
from torch import nn

torch.manual_seed(0)
lstm = nn.LSTM(4, 8, num_layers=2)
head = nn.Linear(8, 1)
opt = torch.optim.SGD(list(lstm.parameters()) + list(head.parameters()), lr=0.1)
out, (h, c) = lstm(torch.randn(5, 2, 4))
top_state = (h[-1:], c[-1:])  # the last layer's state: views of h and c
opt.zero_grad()
head(out).pow(2).mean().backward()
opt.step()
for segment in range(3):
    for s in top_state:  # meant to cut the carried graph; a view cannot be detached in place
        s.detach_()  # <- GG111
    state = tuple(torch.cat([torch.zeros_like(s), s]) for s in top_state)
    out, (h, c) = lstm(torch.randn(5, 2, 4), state)
    top_state = (h[-1:], c[-1:])
    loss = head(out).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
