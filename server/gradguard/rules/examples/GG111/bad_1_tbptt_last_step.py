import torch
from torch import nn

torch.manual_seed(0)
rnn = nn.GRU(4, 8, batch_first=True)
head = nn.Linear(8, 1)
opt = torch.optim.SGD(list(rnn.parameters()) + list(head.parameters()), lr=0.1)
h0 = None
for segment in range(3):  # truncated backpropagation: the state carried to the next segment has no graph
    x = torch.randn(2, 5, 4)
    out, _ = rnn(x, h0)
    loss = head(out).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    h = out[:, -1]
    h.detach_()  # <- GG111
    h0 = h.unsqueeze(0)
