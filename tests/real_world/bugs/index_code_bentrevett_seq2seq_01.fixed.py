import random

import torch
import torch.nn as nn

torch.manual_seed(0)
random.seed(0)


class Encoder(nn.Module):
    def __init__(self, in_dim, hid):
        super().__init__()
        self.rnn = nn.GRU(in_dim, hid)

    def forward(self, src):
        _, hidden = self.rnn(src)
        return hidden[-1]


class Decoder(nn.Module):
    def __init__(self, out_dim, hid):
        super().__init__()
        self.rnn = nn.GRUCell(out_dim, hid)
        self.fc_out = nn.Linear(hid, out_dim)

    def forward(self, x, h):
        h = self.rnn(x, h)
        return self.fc_out(h), h


class Seq2Seq(nn.Module):
    def __init__(self, encoder, decoder):
        super().__init__()
        self.encoder = encoder
        self.decoder = decoder

    def forward(self, src, trg, teacher_forcing_ratio=0.5):
        trg_len, batch_size, out_dim = trg.shape
        outputs = torch.zeros(trg_len, batch_size, out_dim)
        h = self.encoder(src)
        x = src[-1, :, :out_dim]
        for t in range(trg_len):
            output, h = self.decoder(x, h)
            outputs[t] = output
            teacher_force = random.random() < teacher_forcing_ratio
            x = trg[t] if teacher_force else output
        return outputs


model = Seq2Seq(Encoder(2, 16), Decoder(2, 16))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
criterion = nn.MSELoss()
for epoch in range(2):
    src, trg = torch.randn(6, 4, 2), torch.randn(5, 4, 2)
    optimizer.zero_grad()
    loss = criterion(model(src, trg), trg)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
