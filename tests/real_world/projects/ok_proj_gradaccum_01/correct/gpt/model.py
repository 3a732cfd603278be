import torch
import torch.nn as nn
import torch.nn.functional as F


class TinyGPT(nn.Module):
    def __init__(self, vocab=32, d=16, block=8):
        super().__init__()
        self.wte, self.wpe = nn.Embedding(vocab, d), nn.Embedding(block, d)
        self.mlp = nn.Sequential(nn.LayerNorm(d), nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))
        self.lm_head = nn.Linear(d, vocab)

    def forward(self, idx, targets):
        pos = torch.arange(idx.shape[1])
        x = self.wte(idx) + self.wpe(pos)
        x = x + self.mlp(x)
        logits = self.lm_head(x)
        return logits, F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))
