import torch.nn as nn


class Mlp(nn.Module):
    def __init__(self, dim, hidden, use_norm=True, act_inplace=False):
        super().__init__()
        self.norm = nn.LayerNorm(dim) if use_norm else None
        self.act = nn.ReLU(inplace=act_inplace)
        self.fc1 = nn.Linear(dim, hidden)
        self.fc2 = nn.Linear(hidden, dim)

    def forward(self, x):
        if self.norm is not None:
            x = self.norm(x)
        x = self.act(x)
        return self.fc2(self.fc1(x))
