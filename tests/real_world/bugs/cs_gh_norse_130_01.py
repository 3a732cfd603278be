import torch
import torch.nn as nn

torch.manual_seed(0)


class LIFCell(nn.Module):
    def __init__(self, input_size, hidden_size, tau_mem=0.9, tau_syn=0.8, v_th=1.0):
        super().__init__()
        self.input_weights = nn.Parameter(torch.randn(hidden_size, input_size) * 0.3)
        self.tau_mem, self.tau_syn, self.v_th = tau_mem, tau_syn, v_th
        self.hidden_size = hidden_size

    def forward(self, x, state=None):
        if state is None:
            state = (torch.zeros(x.size(0), self.hidden_size), torch.zeros(x.size(0), self.hidden_size))
        v, i = state
        i = self.tau_syn * i + x @ self.input_weights.T
        v = self.tau_mem * v + i
        z = torch.sigmoid(10 * (v - self.v_th))
        v = v - z * self.v_th
        return z, (v, i)


def train(cell, batches):
    optimizer = torch.optim.Adam(cell.parameters(), lr=1e-2)
    state = None
    for batch in batches:
        out, state = cell(batch, state)
        loss = (out.mean() - 0.2) ** 2
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


train(LIFCell(12, 4), [torch.ones(8, 12) * 0.5 for _ in range(3)])
