import torch
from torch import nn

torch.manual_seed(0)
qkv = nn.Linear(16, 48)
x = torch.randn(2, 5, 16)
B, N, C = x.shape
q, k, v = qkv(x).split(C, dim=-1)
# a transposed piece reshaped back into (B * N, C) cannot be a view: torch copies, so the write is on the copy
q = q.transpose(0, 1).reshape(B * N, C)
q *= C ** -0.5
loss = (q.reshape(N, B, C).transpose(0, 1) * k).sum() + v.mean()
loss.backward()
