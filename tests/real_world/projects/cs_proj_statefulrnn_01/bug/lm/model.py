import torch
import torch.nn as nn


class RNNModel(nn.Module):
    def __init__(self, ntoken=30, ninp=16, nhid=16):
        super().__init__()
        self.encoder = nn.Embedding(ntoken, ninp)
        self.rnn = nn.GRU(ninp, nhid, batch_first=True)
        self.decoder = nn.Linear(nhid, ntoken)
        self.hidden = None

    def reset_state(self, bsz):
        self.hidden = torch.zeros(1, bsz, self.rnn.hidden_size)

    def forward(self, tokens):
        output, self.hidden = self.rnn(self.encoder(tokens), self.hidden)
        return self.decoder(output)
