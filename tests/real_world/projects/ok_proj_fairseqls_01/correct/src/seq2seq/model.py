import torch.nn as nn


class TinySeq2Seq(nn.Module):
    def __init__(self, vocab=20, dim=16):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.rnn = nn.GRU(dim, dim, batch_first=True)
        self.out = nn.Linear(dim, vocab)

    def forward(self, src):
        h, _ = self.rnn(self.embed(src))
        return self.out(h)
