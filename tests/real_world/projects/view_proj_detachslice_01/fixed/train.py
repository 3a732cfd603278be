import torch
import torch.nn as nn

from memory.bank import SlotMemory
from memory.reader import MemoryReader

torch.manual_seed(0)
encoder, reader = nn.Linear(4, 8), MemoryReader()
opt = torch.optim.Adam([*encoder.parameters(), *reader.parameters()], lr=1e-3)
mem = SlotMemory()
for step in range(4):
    obs = torch.randn(1, 2, 4)
    mem.write(encoder(obs))
    mem.truncate_history()
    loss = reader(torch.randn(1, 3, 8), mem.slots).pow(2).mean()
    opt.zero_grad()
    loss.backward(retain_graph=True)
    opt.step()
    print(step, loss.item())
