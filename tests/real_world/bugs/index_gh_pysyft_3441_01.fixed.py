import torch
import torch.nn as nn

torch.manual_seed(0)


class RNNBase(nn.Module):
    def __init__(self, input_size, hidden_size, num_layers=2):
        super().__init__()
        self.hidden_size, self.num_layers = hidden_size, num_layers
        self.rnn_forward = nn.ModuleList(
            [nn.RNNCell(input_size if i == 0 else hidden_size, hidden_size) for i in range(num_layers)])

    def _init_hidden(self, input):
        return torch.zeros(self.num_layers, input.shape[1], self.hidden_size)

    def _apply_time_step(self, x, h, t):
        rnn_layers = self.rnn_forward
        h_next = []
        for layer in range(self.num_layers):
            inp = x if layer == 0 else h_next[layer - 1]
            h_next.append(rnn_layers[layer](inp, h[layer, :, :]))
        return torch.stack(h_next)

    def forward(self, x, h=None):
        if h is None:
            h = self._init_hidden(x)
        output = []
        for t in range(x.shape[0]):
            h = self._apply_time_step(x[t], h, t)
            output.append(h[-1])
        return torch.stack(output), h


rnn = RNNBase(3, 6)
opt = torch.optim.SGD(rnn.parameters(), lr=0.1)
for _ in range(2):
    out, h = rnn(torch.randn(4, 2, 3))
    loss = out.pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
