import torch.nn as nn

from models.gates import sigmoid_gate


class GatedMlp(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.fc = nn.Linear(cfg.dim, cfg.hidden)
        self.gate = nn.Linear(cfg.dim, cfg.hidden)
        self.norm = nn.LayerNorm(cfg.hidden) if cfg.gate_norm else nn.Identity()
        self.out = nn.Linear(cfg.hidden, cfg.n_classes)

    def forward(self, x):
        g = sigmoid_gate(x, self.gate)
        g = self.norm(g)
        g = g * 2.0 - 1.0
        return self.out(self.fc(x) * g)
