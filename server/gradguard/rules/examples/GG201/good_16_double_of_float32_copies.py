import torch
from torch import nn

torch.manual_seed(0)
head = nn.Linear(6, 10)
hidden = torch.randn(4, 6)
logits = head(hidden)
z_loss = torch.logsumexp(logits, dim=-1).pow(2).mean()
logits64 = logits.to(torch.float64)  # another dtype: a copy, the saved `logits` is untouched
logits64 -= logits64.max(dim=-1, keepdim=True).values.detach()
loss = nn.functional.cross_entropy(logits64, torch.tensor([1, 2, 3, 4])) + 1e-4 * z_loss
loss.backward()
