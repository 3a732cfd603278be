import torch
from torch import nn

torch.manual_seed(0)
gru = nn.GRU(input_size=2, hidden_size=3)
head = nn.Linear(3, 1)
opt = torch.optim.SGD([*gru.parameters(), *head.parameters()], lr=0.1, fused=True)
stream = torch.randn(8, 1, 2)
hidden = torch.zeros(1, 1, 3)
for i in range(4):
    output, hidden_out = gru(stream[2 * i:2 * i + 2], hidden)
    loss = head(output[-1]).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    hidden = hidden_out.detach()
