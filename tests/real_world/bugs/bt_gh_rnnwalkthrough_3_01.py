import torch
from torch import nn

torch.manual_seed(0)

text = ['hey how are you', 'good i am fine', 'have a nice day']
chars = set(''.join(text))
int2char = dict(enumerate(chars))
char2int = {char: ind for ind, char in int2char.items()}
maxlen = len(max(text, key=len))
text = [t.ljust(maxlen) for t in text]
chars = set(''.join(text))
int2char = dict(enumerate(chars))
char2int = {char: ind for ind, char in int2char.items()}
dict_size, seq_len, batch_size = len(char2int), maxlen - 1, len(text)

input_seq = [[char2int[c] for c in t[:-1]] for t in text]
target_seq = [[char2int[c] for c in t[1:]] for t in text]
input_seq = nn.functional.one_hot(torch.tensor(input_seq), dict_size).float()
target_seq = torch.tensor(target_seq)


class Model(nn.Module):
    def __init__(self, input_size, output_size, hidden_dim, n_layers):
        super(Model, self).__init__()
        self.hidden_dim = hidden_dim
        self.n_layers = n_layers
        self.rnn = nn.RNN(input_size, hidden_dim, n_layers, batch_first=True)
        self.fc = nn.Linear(hidden_dim, output_size)
        self.hidden = self.init_hidden(batch_size)

    def forward(self, x):
        out, self.hidden = self.rnn(x, self.hidden)
        out = out.contiguous().view(-1, self.hidden_dim)
        out = self.fc(out)
        return out, self.hidden

    def init_hidden(self, batch_size):
        return torch.zeros(self.n_layers, batch_size, self.hidden_dim)


model = Model(input_size=dict_size, output_size=dict_size, hidden_dim=12, n_layers=1)
n_epochs = 3
lr = 0.01
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.Adam(model.parameters(), lr=lr)

for epoch in range(1, n_epochs + 1):
    optimizer.zero_grad()  # Clears existing gradients from previous epoch
    output, hidden = model(input_seq)
    loss = criterion(output, target_seq.view(-1).long())
    loss.backward()  # Does backpropagation and calculates gradients
    optimizer.step()  # Updates the weights accordingly
