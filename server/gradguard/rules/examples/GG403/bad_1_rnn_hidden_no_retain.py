import torch
from torch import nn

torch.manual_seed(0)
rnn = nn.RNN(input_size=2, hidden_size=4, batch_first=True)
head = nn.Linear(4, 1)
opt = torch.optim.Adam([*rnn.parameters(), *head.parameters()], lr=1e-2)
seq = torch.randn(1, 9, 2)
target = torch.randn(1, 9, 1)
h = torch.zeros(1, 1, 4)
for start in range(0, 9, 3):
    out, h_next = rnn(seq[:, start:start + 3], h)
    loss = nn.functional.mse_loss(head(out), target[:, start:start + 3])
    opt.zero_grad()
    loss.backward()
    opt.step()
    h = h_next  # <- GG403
