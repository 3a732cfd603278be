import torch
import torch.nn as nn


class MemAttention(nn.Module):
    def __init__(self, d=16):
        super().__init__()
        self.q = nn.Linear(d, d)
        self.kv = nn.Linear(d, 2 * d)
        self.o = nn.Linear(d, d)

    def forward(self, h, mem):
        cat = torch.cat([mem, h], dim=1) if mem is not None else h
        k, v = self.kv(cat).chunk(2, dim=-1)
        att = torch.softmax(self.q(h) @ k.transpose(1, 2) / h.shape[-1] ** 0.5, dim=-1)
        return h + self.o(att @ v)
