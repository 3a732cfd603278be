import torch
import torch.nn as nn

torch.manual_seed(0)
vocab_size, batch_size = 20, 2


class LanguageModel(nn.Module):
    def __init__(self, vocab_size, emb=8, hidden=8):
        super().__init__()
        self.emb = nn.Embedding(vocab_size, emb)
        self.rnn = nn.LSTM(emb, hidden)
        self.out = nn.Linear(hidden, vocab_size)
        self.hidden = hidden

    def init_hidden(self, batch_size):
        return (torch.zeros(1, batch_size, self.hidden), torch.zeros(1, batch_size, self.hidden))

    def forward(self, text, hidden):
        output, hidden = self.rnn(self.emb(text), hidden)
        return self.out(output), hidden


def detach_tensors(hidden):
    return tuple(h.detach() for h in hidden)


class Batch:
    def __init__(self):
        self.text = torch.randint(0, vocab_size, (5, batch_size))
        self.target = torch.randint(0, vocab_size, (5, batch_size))


model = LanguageModel(vocab_size)
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
train_iter = [Batch() for _ in range(3)]

model.train()
hidden = model.init_hidden(batch_size)
for data in train_iter:
    text, target = data.text, data.target
    model.zero_grad()
    output, hidden = model(text, hidden)
    hidden = detach_tensors(hidden)  # for truncated bptt
    loss = criterion(output.view(-1, vocab_size), target.view(-1))
    loss.backward()

    optimizer.step()
