import torch
from torch import nn

torch.manual_seed(0)
rec = nn.Linear(8, 8)
head = nn.Linear(8, 1)
memory_init = nn.Parameter(torch.randn(2, 8))  # a learned first memory
opt = torch.optim.SGD([*rec.parameters(), *head.parameters(), memory_init], lr=0.1)
memory = torch.tanh(rec(memory_init))  # the first segment
loss = head(memory).pow(2).mean()
opt.zero_grad()
loss.backward(retain_graph=True)
opt.step()  # <- GG401
for segment in range(3):  # the next segments carry the memory on
    memory = torch.tanh(rec(memory) + torch.randn(2, 8))
    loss = head(memory).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    memory = memory.detach()
