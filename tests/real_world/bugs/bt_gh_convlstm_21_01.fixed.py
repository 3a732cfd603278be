import torch
import torch.nn as nn

torch.manual_seed(0)


class ConvLSTMCell(nn.Module):
    def __init__(self, input_dim, hidden_dim, kernel_size=3, bias=True):
        super(ConvLSTMCell, self).__init__()
        self.hidden_dim = hidden_dim
        self.conv = nn.Conv2d(input_dim + hidden_dim, 4 * hidden_dim, kernel_size, padding=kernel_size // 2, bias=bias)

    def forward(self, input_tensor, cur_state):
        h_cur, c_cur = cur_state
        combined = torch.cat([input_tensor, h_cur], dim=1)  # concatenate along channel axis
        combined_conv = self.conv(combined)
        cc_i, cc_f, cc_o, cc_g = torch.split(combined_conv, self.hidden_dim, dim=1)
        i, f, o, g = torch.sigmoid(cc_i), torch.sigmoid(cc_f), torch.sigmoid(cc_o), torch.tanh(cc_g)
        c_next = f * c_cur + i * g
        h_next = o * torch.tanh(c_next)
        return h_next, c_next

    def init_hidden(self, batch_size, image_size):
        height, width = image_size
        return (torch.zeros(batch_size, self.hidden_dim, height, width),
                torch.zeros(batch_size, self.hidden_dim, height, width))


class ConvLSTM(nn.Module):
    def __init__(self, input_dim, hidden_dim):
        super(ConvLSTM, self).__init__()
        self.cell = ConvLSTMCell(input_dim, hidden_dim)

    def forward(self, input_tensor, hidden_state=None):
        b, seq_len, _, h, w = input_tensor.size()
        # Implement stateful ConvLSTM
        if hidden_state is None:
            hidden_state = self.cell.init_hidden(batch_size=b, image_size=(h, w))
        state = hidden_state
        outputs = []
        for t in range(seq_len):
            state = self.cell(input_tensor[:, t], state)
            outputs.append(state[0])
        return torch.stack(outputs, dim=1), state


class MyModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.my_model = nn.Conv2d(1, 2, 3, padding=1)
        self.convlstm = ConvLSTM(2, 2)
        self.hidden = None

    def forward(self, x):
        out = self.my_model(x)
        out = out.unsqueeze(1)  # make sure dimensions fit
        hidden = None if self.hidden is None else tuple(s.detach() for s in self.hidden)
        out, self.hidden = self.convlstm(out, hidden)
        return out[:, -1].squeeze(1)


model = MyModel()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
for frame, target in [(torch.rand(1, 1, 6, 6), torch.rand(1, 2, 6, 6)) for _ in range(3)]:
    optimizer.zero_grad()
    loss = nn.functional.mse_loss(model(frame), target)
    loss.backward()
    optimizer.step()
