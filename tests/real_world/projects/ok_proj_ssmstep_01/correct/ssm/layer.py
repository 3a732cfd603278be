import torch
import torch.nn as nn

from .scan import scan


class DiagonalSSM(nn.Module):
    def __init__(self, d_model=4, d_state=8, batch=2):
        super().__init__()
        self.log_a = nn.Parameter(-torch.rand(d_model, d_state))
        self.b = nn.Parameter(torch.randn(d_model, d_state) * 0.1)
        self.c = nn.Parameter(torch.randn(d_model, d_state) * 0.1)
        self.register_buffer("state", torch.zeros(batch, d_model, d_state))
        self.last_state = None

    def forward(self, x):
        y, self.last_state = scan(self.state.clone(), x, self.log_a, self.b, self.c)
        return y

    @torch.no_grad()
    def commit_state(self):
        self.state.copy_(self.last_state)
