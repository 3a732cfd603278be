import torch
import torch.nn as nn

from .scan import recurrent_step


class DiagonalSSM(nn.Module):
    def __init__(self, d_model=4, d_state=8, batch=2):
        super().__init__()
        self.log_a = nn.Parameter(-torch.rand(d_model, d_state))
        self.b = nn.Parameter(torch.randn(d_model, d_state) * 0.1)
        self.c = nn.Parameter(torch.randn(d_model, d_state) * 0.1)
        self.register_buffer("state", torch.zeros(batch, d_model, d_state))

    def forward(self, x):
        outs = []
        state = self.state.clone()
        for t in range(x.shape[1]):
            state, y = recurrent_step(state, x[:, t], self.log_a, self.b, self.c)
            outs.append(y)
        self.state.copy_(state.detach())
        return torch.stack(outs, dim=1)
