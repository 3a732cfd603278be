import torch.nn as nn

from txl.layers import MemAttention


class MemTransformerLM(nn.Module):
    def __init__(self, ntoken=25, d=16, mem_len=8):
        super().__init__()
        self.emb = nn.Embedding(ntoken, d)
        self.layer = MemAttention(d)
        self.out = nn.Linear(d, ntoken)
        self.mem_len = mem_len

    def update_mems(self, hidden, mems):
        new = hidden if mems is None else __import__("torch").cat([mems, hidden], dim=1)
        return new[:, -self.mem_len:]

    def forward(self, tokens, mems=None):
        h = self.emb(tokens)
        out = self.layer(h, mems)
        return self.out(out), self.update_mems(out.detach(), mems)
