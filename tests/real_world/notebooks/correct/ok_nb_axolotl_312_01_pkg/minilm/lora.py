import torch
import torch.nn as nn


class LoRALinear(nn.Module):
    def __init__(self, base, r=4, alpha=8):
        super().__init__()
        self.base = base
        self.lora_A = nn.Parameter(torch.randn(r, base.in_features) * 0.01)
        self.lora_B = nn.Parameter(torch.zeros(base.out_features, r))
        self.scaling = alpha / r

    def forward(self, x):
        return self.base(x) + (x @ self.lora_A.t() @ self.lora_B.t()) * self.scaling


def add_lora(model, r=4, alpha=8):
    for p in model.parameters():
        p.requires_grad_(False)
    for layer in model.layers:
        layer.up = LoRALinear(layer.up, r, alpha)
        layer.down = LoRALinear(layer.down, r, alpha)
    return model
