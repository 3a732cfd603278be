import torch
from torch import nn

torch.manual_seed(0)
entity = nn.Embedding(6, 5, max_norm=1.0)
proj = nn.Parameter(torch.randn(7, 5))
tail = entity(torch.tensor([1, 2]))  # renormalises the rows it looks up, before anything saves the weight
all_scores = entity.weight @ proj.T
loss = (all_scores.sum() + (tail @ proj.T).sum())
loss.backward()
