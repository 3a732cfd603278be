import torch
import torch.nn as nn
import torch.nn.functional as F

from infini import CompressiveMemory

torch.manual_seed(0)
emb = nn.Embedding(20, 16)
mem = CompressiveMemory()
head = nn.Linear(16, 20)
params = [*emb.parameters(), *mem.parameters(), *head.parameters()]
opt = torch.optim.Adam(params, lr=1e-3)
doc = torch.randint(0, 20, (2, 33))
mem.reset()
for s in range(0, 32, 8):
    x, y = doc[:, s:s + 8], doc[:, s + 1:s + 9]
    loss = F.cross_entropy(head(mem(emb(x))).reshape(-1, 20), y.reshape(-1))
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(s, loss.item())
