import torch
import torch.nn as nn

torch.manual_seed(0)


class LIFCell(nn.Module):
    def __init__(self, input_size, hidden_size, tau_mem=0.9, v_th=1.0):
        super().__init__()
        self.input_weights = nn.Parameter(torch.randn(hidden_size, input_size) * 0.3)
        self.tau_mem, self.v_th, self.hidden_size = tau_mem, v_th, hidden_size

    def forward(self, x, state=None):
        v = torch.zeros(x.size(0), self.hidden_size) if state is None else state
        v = self.tau_mem * v + x @ self.input_weights.T
        z = torch.sigmoid(10 * (v - self.v_th))
        return z, v - z * self.v_th


def train(model, sequences, timesteps=10):
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    for data in sequences:
        s = None
        for ts in range(timesteps):
            out, s = model(data, s)
        loss = out.sum()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


train(LIFCell(12, 1), [torch.ones(100, 12) * 0.2 for _ in range(2)])
