# expect-kind: none
import torch
from torch import nn

torch.manual_seed(0)
lstm = nn.LSTM(4, 8)
head = nn.Linear(8, 1)
opt = torch.optim.SGD([*lstm.parameters(), *head.parameters()], lr=0.05)
series = torch.randn(40, 1, 4)
state = None
for start in range(0, 40, 10):
    chunk = series[start:start + 10]
    out, state = lstm(chunk, state)
    loss = head(out).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    state = tuple(s.detach() for s in state)
print("loss", loss.item())
