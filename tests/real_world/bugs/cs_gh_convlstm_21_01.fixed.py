import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class ConvLSTMCell(nn.Module):
    def __init__(self, input_dim, hidden_dim, kernel_size=3):
        super().__init__()
        self.hidden_dim = hidden_dim
        self.conv = nn.Conv2d(input_dim + hidden_dim, 4 * hidden_dim, kernel_size, padding=kernel_size // 2)

    def forward(self, input_tensor, cur_state):
        h_cur, c_cur = cur_state
        combined_conv = self.conv(torch.cat([input_tensor, h_cur], dim=1))
        cc_i, cc_f, cc_o, cc_g = torch.split(combined_conv, self.hidden_dim, dim=1)
        c_next = torch.sigmoid(cc_f) * c_cur + torch.sigmoid(cc_i) * torch.tanh(cc_g)
        h_next = torch.sigmoid(cc_o) * torch.tanh(c_next)
        return h_next, c_next


class VideoPredictor(nn.Module):
    def __init__(self, channels=1, hidden=4):
        super().__init__()
        self.cell = ConvLSTMCell(channels, hidden)
        self.head = nn.Conv2d(hidden, channels, 1)
        self.hidden_state = None

    def forward(self, frames):
        b, t, _, hgt, wid = frames.shape
        if self.hidden_state is None:
            zeros = torch.zeros(b, self.cell.hidden_dim, hgt, wid)
            self.hidden_state = [(zeros, zeros)]
        h, c = self.hidden_state[0]
        for step in range(t):
            h, c = self.cell(frames[:, step], (h, c))
        self.hidden_state = [(h.detach(), c.detach())]
        return self.head(h)


model = VideoPredictor()
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
stream = torch.rand(2, 12, 1, 6, 6)
for start in range(0, 9, 4):
    clip, target = stream[:, start:start + 3], stream[:, start + 3]
    loss = F.mse_loss(model(clip), target)
    opt.zero_grad()
    loss.backward()
    opt.step()
