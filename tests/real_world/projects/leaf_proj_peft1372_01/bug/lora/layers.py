import torch
import torch.nn as nn


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
        after_A = nn.functional.embedding(x, self.lora_embedding_A.T)
        result += (after_A @ self.lora_embedding_B.T) * self.scaling
        return result
