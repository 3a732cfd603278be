import torch
import torch.nn as nn
import torch.nn.functional as F


class LoraEmbedding(nn.Module):
    def __init__(self, base_layer, r=4, alpha=8):
        super().__init__()
        self.base_layer = base_layer
        n, d = base_layer.weight.shape
        self.lora_embedding_A = nn.Parameter(torch.randn(r, n) * 0.01)
        self.lora_embedding_B = nn.Parameter(torch.zeros(d, r))
        self.scaling = alpha / r

    def forward(self, x):
        result = self.base_layer(x)
        after_A = F.embedding(x, self.lora_embedding_A.T)
        result = result + (after_A @ self.lora_embedding_B.T) * self.scaling
        return result


class LoraLinear(nn.Module):
    def __init__(self, base_layer, r=4, alpha=8):
        super().__init__()
        self.base_layer = base_layer
        self.lora_A = nn.Linear(base_layer.in_features, r, bias=False)
        self.lora_B = nn.Linear(r, base_layer.out_features, bias=False)
        nn.init.zeros_(self.lora_B.weight)
        self.scaling = alpha / r

    def forward(self, x):
        result = self.base_layer(x)
        result += self.lora_B(self.lora_A(x)) * self.scaling
        return result
