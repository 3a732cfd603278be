import torch
import torch.nn.functional as F
from torch import nn

torch.manual_seed(0)
to_q = nn.Linear(4, 4)
x = torch.randn(2, 3, 4)
for step in range(2):
    scores = to_q(x) @ x.transpose(1, 2) / 2.0
    attn = torch.softmax(scores, dim=-1)
    attn = F.dropout(attn, p=0.1, training=True, inplace=True)  # <- GG202
    out = attn @ x
    out.pow(2).mean().backward()
