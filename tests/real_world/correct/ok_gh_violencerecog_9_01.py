import torch
from torch import nn
import torch.nn.functional as f

torch.manual_seed(0)


class ConvLSTMCell(nn.Module):
    def __init__(self, input_size, hidden_size, kernel_size=3, stride=1, padding=1):
        super(ConvLSTMCell, self).__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.Gates = nn.Conv2d(input_size + hidden_size, 4 * hidden_size, kernel_size=kernel_size, stride=stride, padding=padding)
        torch.nn.init.xavier_normal_(self.Gates.weight)
        torch.nn.init.constant_(self.Gates.bias, 0)

    def forward(self, input_, prev_state):
        # get batch and spatial sizes
        batch_size = input_.data.size()[0]
        spatial_size = input_.data.size()[2:]

        # generate empty prev_state, if None is provided
        if prev_state is None:
            state_size = [batch_size, self.hidden_size] + list(spatial_size)
            prev_state = (torch.zeros(state_size), torch.zeros(state_size))

        prev_hidden, prev_cell = prev_state

        # data size is [batch, channel, height, width]
        stacked_inputs = torch.cat((input_, prev_hidden), 1)
        gates = self.Gates(stacked_inputs)

        # chunk across channel dimension
        in_gate, remember_gate, out_gate, cell_gate = gates.chunk(4, 1)

        # apply sigmoid non linearity
        in_gate = f.sigmoid(in_gate)
        remember_gate = f.sigmoid(remember_gate)
        out_gate = f.sigmoid(out_gate)

        # apply tanh non linearity
        cell_gate = f.tanh(cell_gate)

        # compute current cell and hidden state
        cell = (remember_gate * prev_cell) + (in_gate * cell_gate)
        hidden = out_gate * f.tanh(cell)

        return hidden, cell


class deepSignal(nn.Module):

    def __init__(self, mem_size):
        super(deepSignal, self).__init__()
        self.mem_size = mem_size
        self.convNet = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.ReLU(inplace=True))
        self.conv_lstm = ConvLSTMCell(4, self.mem_size)
        self.relu = nn.ReLU()
        self.maxpool = nn.MaxPool2d(2)
        self.classifier = nn.Sequential(nn.Linear(3 * 3 * self.mem_size, 8), nn.ReLU(), nn.Linear(8, 2))

    def forward(self, x):
        state = None
        seqLen = x.size(0) - 1
        for t in range(0, seqLen):
            x1 = x[t] - x[t + 1]
            x1 = self.convNet(x1)
            state = self.conv_lstm(x1, state)
        x = self.maxpool(state[0])
        x = self.classifier(x.view(x.size(0), -1))
        return x


model = deepSignal(mem_size=2)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
for clip, label in [(torch.rand(4, 2, 3, 6, 6), torch.randint(0, 2, (2,))) for _ in range(2)]:
    optimizer.zero_grad()
    loss = nn.functional.cross_entropy(model(clip), label)
    loss.backward()
    optimizer.step()
