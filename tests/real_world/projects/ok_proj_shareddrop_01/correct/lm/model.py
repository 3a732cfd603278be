import torch.nn as nn

from lm.embedding import GatedEmbedding


class GatedEmbeddingLM(nn.Module):
    def __init__(self, vocab=30, dim=16, p_drop=0.1):
        super().__init__()
        self.embed = GatedEmbedding(vocab, dim, p_drop)
        self.rnn = nn.GRU(dim, dim, batch_first=True)
        self.head = nn.Linear(dim, vocab)

    def forward(self, ids):
        h, _ = self.rnn(self.embed(ids))
        return self.head(h)
