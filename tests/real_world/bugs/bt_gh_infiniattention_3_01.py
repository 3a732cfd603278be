import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class InfiniAttention(nn.Module):
    def __init__(self, dim=8, segment_len=4):
        super().__init__()
        self.dim, self.segment_len = dim, segment_len
        self.qkv = nn.Linear(dim, 3 * dim, bias=False)
        self.out = nn.Linear(dim, dim, bias=False)
        self.beta = nn.Parameter(torch.zeros(1))
        self.M = torch.zeros(dim, dim)
        self.z = torch.zeros(dim, 1)

    def _retrieve_from_memory(self, Q):
        sigma_q = F.elu(Q) + 1.0
        return (sigma_q @ self.M) / (sigma_q @ self.z + 1e-6)

    def _update_memory(self, K, V):
        sigma_k = F.elu(K) + 1.0
        self.M = self.M + (sigma_k.transpose(-2, -1) @ V)[0]
        self.z = self.z + sigma_k.sum(dim=-2, keepdim=True).transpose(-2, -1)[0]

    def forward(self, x):
        Q, K, V = self.qkv(x).chunk(3, dim=-1)
        A_mem = self._retrieve_from_memory(Q)
        A_dot = F.scaled_dot_product_attention(Q, K, V, is_causal=True)
        gate = torch.sigmoid(self.beta)
        A = gate * A_mem + (1 - gate) * A_dot
        self._update_memory(K, V)
        return self.out(A)


class Model(nn.Module):
    def __init__(self, vocab=16, dim=8):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim)
        self.attn = InfiniAttention(dim)
        self.lm_head = nn.Linear(dim, vocab)

    def forward(self, ids):
        return self.lm_head(self.attn(self.emb(ids)))


model = Model()
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
segment_len, gradient_accumulation_steps = 4, 3
input_ids = torch.randint(0, 16, (1, segment_len * gradient_accumulation_steps + 1))

# gradient-accumulation training over segments: one backward per segment, one step per sequence
optimizer.zero_grad()
for i in range(gradient_accumulation_steps):
    seg = input_ids[:, i * segment_len: (i + 1) * segment_len]
    tgt = input_ids[:, i * segment_len + 1: (i + 1) * segment_len + 1]
    logits = model(seg)
    loss = F.cross_entropy(logits.view(-1, 16), tgt.reshape(-1)) / gradient_accumulation_steps
    loss.backward()
optimizer.step()
