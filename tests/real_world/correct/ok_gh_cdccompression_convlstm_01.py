import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class ConvLSTMCell(nn.Module):
    def __init__(self, input_dim, hidden_dim, kernel_size, bias=True, n_layer=1):
        super().__init__()
        self.input_dim = input_dim
        self.hidden_dim = hidden_dim
        self.kernel_size = kernel_size
        self.padding = kernel_size // 2
        self.bias = bias
        self.cur_states = [None for i in range(n_layer)]
        self.n_layer = n_layer
        self.convs = nn.ModuleList(
            [
                nn.Conv2d(
                    in_channels=self.input_dim + self.hidden_dim,
                    out_channels=4 * self.hidden_dim,
                    kernel_size=self.kernel_size,
                    padding=self.padding,
                    bias=self.bias,
                )
            ]
            + [
                nn.Conv2d(
                    in_channels=self.hidden_dim + self.hidden_dim,
                    out_channels=4 * self.hidden_dim,
                    kernel_size=self.kernel_size,
                    padding=self.padding,
                    bias=self.bias,
                )
                for i in range(n_layer - 1)
            ]
        )

    def step_forward(self, input_tensor, layer_index=0):
        assert self.cur_states[layer_index] is not None
        h_cur, c_cur = self.cur_states[layer_index]
        # concatenate along channel axis
        combined = torch.cat([input_tensor, h_cur], dim=1)
        combined_conv = self.convs[layer_index](combined)
        cc_i, cc_f, cc_o, cc_g = torch.split(combined_conv, self.hidden_dim, dim=1)
        i = torch.sigmoid(cc_i)
        f = torch.sigmoid(cc_f)
        o = torch.sigmoid(cc_o)
        g = torch.tanh(cc_g)
        c_next = f * c_cur + i * g
        h_next = o * torch.tanh(c_next)

        self.cur_states[layer_index] = (h_next, c_next)

        return h_next

    def forward(self, input_tensor):
        for i in range(self.n_layer):
            input_tensor = self.step_forward(input_tensor, i)
        return input_tensor

    def init_hidden(self, batch_shape):
        B, _, H, W = batch_shape
        for i in range(self.n_layer):
            self.cur_states[i] = (
                torch.zeros(B, self.hidden_dim, H, W, device=self.convs[0].weight.device,),
                torch.zeros(B, self.hidden_dim, H, W, device=self.convs[0].weight.device,),
            )


class VideoContext(nn.Module):
    def __init__(self, dim=8):
        super().__init__()
        self.enc = nn.Conv2d(3, dim, 3, 2, 1)
        self.rnn = ConvLSTMCell(dim, dim, 3, n_layer=2)
        self.dec = nn.ConvTranspose2d(dim, 3, 4, 2, 1)

    def forward(self, frames):
        # frames: (B, T, C, H, W); predict frame t + 1 from the context up to t
        loss = 0
        feat = self.enc(frames[:, 0])
        self.rnn.init_hidden(feat.shape)
        for t in range(frames.shape[1] - 1):
            context = self.rnn(self.enc(frames[:, t]))
            loss = loss + F.mse_loss(self.dec(context), frames[:, t + 1])
        return loss / (frames.shape[1] - 1)


model = VideoContext()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
for step in range(3):
    frames = torch.rand(2, 4, 3, 8, 8)
    loss = model(frames)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print(float(loss))
