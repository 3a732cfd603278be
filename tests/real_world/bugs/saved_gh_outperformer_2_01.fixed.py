import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class FastSelfAttention(nn.Module):
    def __init__(self, hidden, heads, n_features=16):
        super().__init__()
        self.heads, self.head_dim = heads, hidden // heads
        self.qkv = nn.Linear(hidden, 3 * hidden)
        self.out = nn.Linear(hidden, hidden)
        self.register_buffer("orf", torch.randn(self.head_dim, n_features))

    def apply_feature_map(self, x, orf):
        projected = x @ orf / self.head_dim ** 0.25
        diag = (x ** 2).sum(-1, keepdim=True) / (2 * self.head_dim ** 0.5)
        return torch.exp(projected - diag)

    def fast_attention(self, query, key, value):
        kv = torch.einsum("bld,ble->bde", key, value)
        normaliser = 1.0 / (torch.einsum("bld,bd->bl", query, key.sum(1)) + 1e-6)
        return torch.einsum("bld,bde,bl->ble", query, kv, normaliser)

    def forward(self, x, attention_mask):
        b, seq_len, _ = x.shape
        qkv = self.qkv(x).view(b, seq_len, 3, self.heads, self.head_dim)
        query, key, value = qkv.permute(2, 0, 3, 1, 4).reshape(3, b * self.heads, seq_len, self.head_dim)
        query = self.apply_feature_map(query, self.orf)
        key = self.apply_feature_map(key, self.orf)
        attention_mask = attention_mask == 0
        attention_mask = attention_mask.repeat(1, self.heads).view(-1, seq_len)[:, :, None]
        query = query.masked_fill(attention_mask, 0)
        key = key.masked_fill(attention_mask, 0)
        out = self.fast_attention(query, key, value)
        out = out.view(b, self.heads, seq_len, self.head_dim).transpose(1, 2).reshape(b, seq_len, -1)
        return self.out(out)


layer = FastSelfAttention(hidden=16, heads=2)
opt = torch.optim.Adam(layer.parameters(), lr=1e-3)
x = torch.randn(2, 5, 16)
mask = torch.tensor([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]])
for _ in range(2):
    loss = F.mse_loss(layer(x, mask), torch.zeros(2, 5, 16))
    opt.zero_grad()
    loss.backward()
    opt.step()
