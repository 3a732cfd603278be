import torch.nn as nn


class TinyLM(nn.Module):
    def __init__(self, vocab=24, dim=16):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.body = nn.GRU(dim, dim, batch_first=True)
        self.head = nn.Linear(dim, vocab)

    def forward(self, ids):
        h, _ = self.body(self.embed(ids))
        return self.head(h)
