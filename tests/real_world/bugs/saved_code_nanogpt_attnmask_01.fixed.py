import math

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class CausalSelfAttention(nn.Module):
    def __init__(self, n_embd=16, n_head=2, block_size=8):
        super().__init__()
        self.c_attn = nn.Linear(n_embd, 3 * n_embd)
        self.c_proj = nn.Linear(n_embd, n_embd)
        self.n_head, self.n_embd = n_head, n_embd
        self.register_buffer("bias", torch.tril(torch.ones(block_size, block_size)).view(1, 1, block_size, block_size))

    def forward(self, x, key_padding_mask):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).view(B, T, 3, self.n_head, C // self.n_head).permute(2, 0, 3, 1, 4)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float("-inf"))
        att = F.softmax(att, dim=-1)
        att = att.masked_fill(key_padding_mask[:, None, None, :], 0.0)
        y = att @ v
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        return self.c_proj(y)


class Block(nn.Module):
    def __init__(self, n_embd=16):
        super().__init__()
        self.ln_1 = nn.LayerNorm(n_embd)
        self.attn = CausalSelfAttention(n_embd)
        self.mlp = nn.Sequential(nn.Linear(n_embd, 4 * n_embd), nn.GELU(), nn.Linear(4 * n_embd, n_embd))

    def forward(self, x, key_padding_mask):
        x = x + self.attn(self.ln_1(x), key_padding_mask)
        return x + self.mlp(x)


wte, block, lm_head = nn.Embedding(40, 16), Block(), nn.Linear(16, 40)
params = list(wte.parameters()) + list(block.parameters()) + list(lm_head.parameters())
optimizer = torch.optim.AdamW(params, lr=6e-4)
idx = torch.randint(0, 40, (2, 8))
pad = torch.tensor([[False] * 8, [False] * 5 + [True] * 3])
for _ in range(2):
    logits = lm_head(block(wte(idx), pad))
    loss = F.cross_entropy(logits[:, :-1].reshape(-1, 40), idx[:, 1:].reshape(-1))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
