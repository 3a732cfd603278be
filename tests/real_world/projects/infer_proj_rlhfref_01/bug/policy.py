import torch.nn as nn


class TinyPolicy(nn.Module):
    def __init__(self, vocab=20, dim=16):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim)
        self.out = nn.Linear(dim, vocab)

    def forward(self, ids):
        return self.out(self.emb(ids).tanh())
