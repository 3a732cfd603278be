import torch
import torch.nn as nn


class Experts(nn.Module):
    def __init__(self, n_experts, dim, hidden):
        super().__init__()
        self.w1 = nn.Parameter(torch.randn(n_experts, dim, hidden) * 0.1)
        self.w2 = nn.Parameter(torch.randn(n_experts, hidden, dim) * 0.1)

    def forward(self, buffer):
        h = torch.relu(torch.bmm(buffer, self.w1))
        return torch.bmm(h, self.w2)
