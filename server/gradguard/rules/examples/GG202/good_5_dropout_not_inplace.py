import torch
from torch import nn

torch.manual_seed(0)
lin = nn.Linear(4, 4)
x = torch.randn(2, 4)
attn = torch.softmax(lin(x), dim=-1)
attn = nn.functional.dropout(attn, p=0.1, training=True)
attn.pow(2).sum().backward()
