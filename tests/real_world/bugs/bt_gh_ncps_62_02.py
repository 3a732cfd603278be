import torch
import torch.nn as nn

torch.manual_seed(0)


class CfC(nn.Module):
    """Closed-form continuous-time cell, reduced: one backbone layer and the time-gated update."""

    def __init__(self, input_size, units, batch_first=True):
        super().__init__()
        self.units, self.batch_first = units, batch_first
        self.backbone = nn.Linear(input_size + units, 10)
        self.ff1 = nn.Linear(10, units)
        self.ff2 = nn.Linear(10, units)
        self.time_a = nn.Linear(10, units)
        self.time_b = nn.Linear(10, units)

    def forward(self, input, hx=None):
        batch_size, seq_len = input.size(0), input.size(1)
        if hx is None:
            hx = torch.zeros(batch_size, self.units)
        outputs = []
        for t in range(seq_len):
            x = torch.tanh(self.backbone(torch.cat([input[:, t], hx], 1)))
            ff1, ff2 = torch.tanh(self.ff1(x)), torch.tanh(self.ff2(x))
            t_interp = torch.sigmoid(self.time_a(x) + self.time_b(x))
            hx = ff1 * (1.0 - t_interp) + t_interp * ff2
            outputs.append(hx)
        return torch.stack(outputs, 1), hx


model = CfC(input_size=7, units=10)
fc = nn.Linear(10, 1)
optimizer = torch.optim.Adam(list(model.parameters()) + list(fc.parameters()), lr=1e-3)
criterion = nn.MSELoss()
train_x, train_y = torch.randn(4, 5, 7), torch.randn(4, 5, 1)

hx = None
for epoch in range(3):
    optimizer.zero_grad()
    output, hx = model(train_x, hx)
    loss = criterion(fc(output), train_y)
    loss.backward()
    optimizer.step()
