import torch
import torch.nn as nn

from moe.dispatcher import SparseDispatcher


class MoE(nn.Module):
    def __init__(self, d=8, n_experts=4, k=2):
        super().__init__()
        self.w_gate = nn.Linear(d, n_experts, bias=False)
        self.experts = nn.ModuleList(nn.Sequential(nn.Linear(d, 16), nn.ReLU(), nn.Linear(16, d))
                                     for _ in range(n_experts))
        self.k = k

    def forward(self, x):
        logits = self.w_gate(x)
        top_v, top_i = logits.topk(self.k, dim=1)
        gates = torch.zeros_like(logits)
        gates = gates.scatter(1, top_i, torch.softmax(top_v, dim=1))
        dispatcher = SparseDispatcher(len(self.experts), gates)
        inputs = dispatcher.dispatch(x)
        outs = [expert(inp) for expert, inp in zip(self.experts, inputs)]
        return dispatcher.combine(outs)
