import torch
import torch.nn as nn


class GatedEmbedding(nn.Module):
    def __init__(self, vocab, dim, p_drop):
        super().__init__()
        self.tok = nn.Embedding(vocab, dim)
        self.gate = nn.Linear(dim, dim)
        self.drop = nn.Dropout(p_drop)

    def forward(self, ids):
        x = self.tok(ids)
        g = torch.sigmoid(self.gate(x))
        x = self.drop(x)
        return x * g
