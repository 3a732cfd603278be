import torch
from torch import nn


def repackage_hidden(h):
    if isinstance(h, torch.Tensor):
        return h.detach()
    return tuple(repackage_hidden(v) for v in h)


class LM(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = nn.LSTM(4, 8)
        self.head = nn.Linear(8, 4)

    def forward(self, x, hidden):
        out, hidden = self.rnn(x, hidden)
        return self.head(out), hidden


def train(model, data, opt):
    hidden = (torch.zeros(1, 2, 8), torch.zeros(1, 2, 8))
    for x, y in data:
        repackage_hidden(hidden)
        out, hidden = model(x, hidden)
        loss = (out - y).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()


model = LM()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
data = [(torch.randn(5, 2, 4), torch.randn(5, 2, 4)) for _ in range(3)]
train(model, data, opt)
