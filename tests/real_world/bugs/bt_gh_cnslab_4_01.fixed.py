import torch
import torch.nn as nn

torch.manual_seed(0)
device = torch.device("cpu")


class fMRI_LSTM(nn.Module):
    def __init__(self, hidden_dim, input_dim):
        super(fMRI_LSTM, self).__init__()
        self.hidden_dim = hidden_dim
        self.lstm = nn.LSTM(input_dim, hidden_dim, num_layers=1, batch_first=True)
        self.linear = nn.Linear(hidden_dim, 1)
        self.hidden = self.init_hidden()
        self.dropout = nn.Dropout(p=0.2)
        self.activate = nn.Sigmoid()

    def init_hidden(self):
        return (torch.randn(1, 4, self.hidden_dim).to(device), torch.randn(1, 4, self.hidden_dim).to(device))

    def forward(self, x):
        lstm_out, hidden = self.lstm(x, self.hidden)
        self.hidden = tuple(h.detach() for h in hidden)
        lstm_out = lstm_out[:, -1, :]
        out = self.dropout(lstm_out)
        linear_output = self.linear(out)
        final_output = self.activate(linear_output)
        return final_output


def train(model, train_loader, optimizer, criterion):
    model.train()
    for x, y in train_loader:
        optimizer.zero_grad()
        output = model(x)
        loss = criterion(output, y)
        loss.backward()
        optimizer.step()


model = fMRI_LSTM(hidden_dim=8, input_dim=6)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
loader = [(torch.randn(4, 5, 6), torch.randint(0, 2, (4, 1)).float()) for _ in range(3)]
train(model, loader, optimizer, nn.BCELoss())
