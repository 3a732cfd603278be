import torch
import torch.nn as nn


class RNNModel(nn.Module):
    def __init__(self, ntoken=30, ninp=16, nhid=16):
        super().__init__()
        self.encoder = nn.Embedding(ntoken, ninp)
        self.rnn = nn.LSTM(ninp, nhid, batch_first=True)
        self.decoder = nn.Linear(nhid, ntoken)
        self.nhid = nhid

    def init_hidden(self, bsz):
        return (torch.zeros(1, bsz, self.nhid), torch.zeros(1, bsz, self.nhid))

    def forward(self, x, hidden):
        out, hidden = self.rnn(self.encoder(x), hidden)
        return self.decoder(out), hidden
