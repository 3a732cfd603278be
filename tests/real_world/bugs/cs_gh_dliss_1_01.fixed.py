import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class LSTMLanguageModel(nn.Module):
    def __init__(self, vocab, dim):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.rnn = nn.LSTM(dim, dim, batch_first=True)
        self.proj = nn.Linear(dim, vocab)

    def forward(self, x, hidden):
        out, hidden = self.rnn(self.embed(x), hidden)
        return self.proj(out), hidden


class LMTrainer:
    def __init__(self, model, bptt=6):
        self.model, self.bptt = model, bptt
        self.optimizer = torch.optim.SGD(model.parameters(), lr=1.0)

    def train_epoch(self, data):
        hidden = None
        for i in range(0, data.size(1) - 1, self.bptt):
            x = data[:, i:i + self.bptt]
            y = data[:, i + 1:i + 1 + self.bptt]
            x = x[:, :y.size(1)]
            logits, hidden = self.model(x, hidden)
            hidden = (hidden[0].detach(), hidden[1].detach())
            loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), y.reshape(-1))
            self.optimizer.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(self.model.parameters(), 0.25)
            self.optimizer.step()


LMTrainer(LSTMLanguageModel(25, 8)).train_epoch(torch.randint(0, 25, (2, 19)))
