import torch
import torch.nn as nn

torch.manual_seed(0)

EPOCH = 2
num_layers, batch_size, hidden_dim, embedding_dim = 1, 4, 6, 5


class LSTMModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(embedding_dim, hidden_dim, num_layers, batch_first=True)
        self.fc = nn.Linear(hidden_dim, embedding_dim)

    def forward(self, x, h0, c0):
        out, (hn, cn) = self.lstm(x, (h0, c0))
        return self.fc(out), (hn, cn)


lstm = LSTMModel()
loss_fn = nn.MSELoss()
optimizer = torch.optim.Adam(lstm.parameters(), lr=1e-3)
data_loader = [(torch.randn(batch_size, 3, embedding_dim), torch.randn(batch_size * 3, embedding_dim)) for _ in range(3)]
batch_count = len(data_loader)

for epoch in range(EPOCH):
    batch_num = 0
    h0 = torch.randn((num_layers, batch_size, hidden_dim), requires_grad=False)
    c0 = torch.randn((num_layers, batch_size, hidden_dim), requires_grad=False)
    for batch in data_loader:
        optimizer.zero_grad()
        output, (h0, c0) = lstm(batch[0], h0, c0)
        loss = loss_fn(output.reshape(-1, embedding_dim), batch[1])
        loss.backward()
        optimizer.step()
        batch_num += 1
        if (batch_num) % min(10, batch_count // 2) == 0:
            print(f'epoch {epoch} : batch {batch_num} : {loss.item():.4f}')
