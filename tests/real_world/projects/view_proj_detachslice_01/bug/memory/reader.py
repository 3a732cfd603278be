import torch
import torch.nn as nn


class MemoryReader(nn.Module):
    def __init__(self, dim=8):
        super().__init__()
        self.q = nn.Linear(dim, dim)

    def forward(self, x, slots):
        att = torch.softmax(self.q(x) @ slots.transpose(1, 2), dim=-1)
        return x + att @ slots
