import torch
from torch import nn

torch.manual_seed(0)
emb = nn.Embedding(10, 4, padding_idx=0)
with torch.no_grad():
    emb.weight[1:3].mul_(0.5)
tokens = torch.tensor([[1, 2, 0], [3, 0, 0]])
loss = emb(tokens).sum(dim=1).pow(2).mean()
loss.backward()
