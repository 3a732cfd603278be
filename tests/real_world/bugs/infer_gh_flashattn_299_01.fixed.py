import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def rotate_half(x):
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat((-x2, x1), dim=-1)


def apply_rotary_emb(x, cos, sin):
    return x * cos + rotate_half(x) * sin


class RotaryEmbedding(nn.Module):
    def __init__(self, dim, base=10000.0):
        super().__init__()
        inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2).float() / dim))
        self.register_buffer("inv_freq", inv_freq, persistent=False)
        self._seq_len_cached = 0
        self._cos_cached = None
        self._sin_cached = None

    def _update_cos_sin_cache(self, seqlen):
        if seqlen > self._seq_len_cached or (self.training and self._cos_cached.is_inference()):
            self._seq_len_cached = seqlen
            t = torch.arange(seqlen, dtype=self.inv_freq.dtype)
            freqs = torch.outer(t, self.inv_freq)
            emb = torch.cat((freqs, freqs), dim=-1)
            self._cos_cached = emb.cos()
            self._sin_cached = emb.sin()

    def forward(self, q, k):
        seqlen = q.shape[-2]
        self._update_cos_sin_cache(seqlen)
        cos, sin = self._cos_cached[:seqlen], self._sin_cached[:seqlen]
        return apply_rotary_emb(q, cos, sin), apply_rotary_emb(k, cos, sin)


class MHA(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.Wqkv = nn.Linear(dim, 3 * dim)
        self.rotary_emb = RotaryEmbedding(dim // heads)
        self.out_proj = nn.Linear(dim, dim)

    def forward(self, x):
        b, s, d = x.shape
        qkv = self.Wqkv(x).view(b, s, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        q, k, v = qkv.unbind(0)
        q, k = self.rotary_emb(q, k)
        out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.out_proj(out.transpose(1, 2).reshape(b, s, d))


model = nn.Sequential(nn.Embedding(50, 16), MHA(16, 2), nn.Linear(16, 50))
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
data = torch.randint(0, 50, (4, 9))


def validate(model, batch):
    model.eval()
    with torch.inference_mode():
        logits = model(batch[:, :-1])
        loss = F.cross_entropy(logits.reshape(-1, 50), batch[:, 1:].reshape(-1))
    model.train()
    return loss.item()


validate(model, data)
for step in range(2):
    logits = model(data[:, :-1])
    loss = F.cross_entropy(logits.reshape(-1, 50), data[:, 1:].reshape(-1))
    opt.zero_grad()
    loss.backward()
    opt.step()
