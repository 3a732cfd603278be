import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

bs = 4
sl = 6
vocab_sz = 10


## Multilayered language model
class LMModel5(nn.Module):
    def __init__(self, vocab_sz, n_hidden, n_layers):
        super().__init__()
        self.i_h = nn.Embedding(vocab_sz, n_hidden)
        self.rnn = nn.RNN(n_hidden, n_hidden, n_layers, batch_first=True)
        self.h_o = nn.Linear(n_hidden, vocab_sz)
        self.h = torch.zeros(n_layers, bs, n_hidden)

    def forward(self, x):
        res, h = self.rnn(self.i_h(x), self.h)
        self.h = h.detach()
        return self.h_o(res)

    def reset(self):
        self.h.zero_()


model = LMModel5(vocab_sz, 16, 2)
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
stream = torch.randint(0, vocab_sz, (bs, sl * 3 + 1))

for epoch in range(2):
    model.reset()  # ModelResetter callback: at the start of each epoch
    for i in range(0, sl * 3, sl):
        x, y = stream[:, i:i + sl], stream[:, i + 1:i + sl + 1]
        out = model(x)
        loss = F.cross_entropy(out.reshape(-1, vocab_sz), y.reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
