import torch
import torch.nn as nn

from moe.experts import Experts


class MoELayer(nn.Module):
    def __init__(self, dispatcher, n_experts=4, dim=8, hidden=16):
        super().__init__()
        self.router = nn.Linear(dim, n_experts)
        self.experts = Experts(n_experts, dim, hidden)
        self.dispatcher = dispatcher

    def forward(self, x):
        probs = torch.softmax(self.router(x), dim=-1)
        weight, expert_idx = probs.max(dim=-1)
        buffer, slots = self.dispatcher.dispatch(x, expert_idx)
        out_buf = self.experts(buffer)
        out = torch.zeros_like(x)
        for e, rows in enumerate(slots):
            out = out.index_add(0, rows, out_buf[e, : len(rows)])
        return x + out * weight[:, None]
