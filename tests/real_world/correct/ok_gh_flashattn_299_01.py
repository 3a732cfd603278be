import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def rotate_half(x):
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat((-x2, x1), dim=-1)


class RotaryEmbedding(nn.Module):
    def __init__(self, dim, base=10000.0):
        super().__init__()
        self.register_buffer("inv_freq", 1.0 / (base ** (torch.arange(0, dim, 2).float() / dim)), persistent=False)
        self._seq_len_cached = 0
        self._cos_cached = None
        self._sin_cached = None

    def _update_cos_sin_cache(self, seqlen):
        if seqlen > self._seq_len_cached:
            self._seq_len_cached = seqlen
            freqs = torch.outer(torch.arange(seqlen, dtype=self.inv_freq.dtype), self.inv_freq)
            emb = torch.cat((freqs, freqs), dim=-1)
            self._cos_cached = emb.cos()
            self._sin_cached = emb.sin()

    def forward(self, q, k):
        seqlen = q.shape[-2]
        self._update_cos_sin_cache(seqlen)
        cos = self._cos_cached[:seqlen].clone()
        sin = self._sin_cached[:seqlen].clone()
        return q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin


class MHA(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.Wqkv = nn.Linear(dim, 3 * dim)
        self.rotary_emb = RotaryEmbedding(dim // heads)
        self.out_proj = nn.Linear(dim, dim)

    def forward(self, x):
        b, s, d = x.shape
        q, k, v = self.Wqkv(x).view(b, s, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4).unbind(0)
        q, k = self.rotary_emb(q, k)
        out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.out_proj(out.transpose(1, 2).reshape(b, s, d))


model = nn.Sequential(nn.Embedding(50, 16), MHA(16, 2), nn.Linear(16, 50))
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
data = torch.randint(0, 50, (4, 9))
model.eval()
with torch.inference_mode():
    model(data[:, :-1])
model.train()
for step in range(2):
    loss = F.cross_entropy(model(data[:, :-1]).reshape(-1, 50), data[:, 1:].reshape(-1))
    opt.zero_grad()
    loss.backward()
    opt.step()
