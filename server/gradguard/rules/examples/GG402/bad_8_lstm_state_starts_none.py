import torch
from torch import nn

torch.manual_seed(0)
lstm = nn.LSTM(input_size=3, hidden_size=4, batch_first=True)
head = nn.Linear(4, 1)
opt = torch.optim.Adam([*lstm.parameters(), *head.parameters()], lr=1e-2)
seq = torch.randn(1, 12, 3)
target = torch.randn(1, 12, 1)
state = None
for chunk in range(3):
    x = seq[:, chunk * 4:(chunk + 1) * 4]
    out, state = lstm(x, state)  # <- GG402
    loss = nn.functional.mse_loss(head(out), target[:, chunk * 4:(chunk + 1) * 4])
    opt.zero_grad()
    loss.backward(retain_graph=True)
    opt.step()
