import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class CausalSelfAttention(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.mask_cache = None

    def causal_mask(self, T):
        if self.mask_cache is None or self.mask_cache.size(-1) < T:
            self.mask_cache = torch.ones(T, T, dtype=torch.bool).triu(1)
        return self.mask_cache[:T, :T]

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.qkv(x).split(C, dim=-1)
        scores = q @ k.transpose(-2, -1) / C ** 0.5
        scores = scores.masked_fill(self.causal_mask(T), float("-inf"))
        return self.proj(scores.softmax(-1) @ v)


class TinyLM(nn.Module):
    def __init__(self, vocab=40, dim=16):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim)
        self.attn = CausalSelfAttention(dim)
        self.head = nn.Linear(dim, vocab)

    def forward(self, ids):
        return self.head(self.attn(self.emb(ids)))


class Trainer:
    def __init__(self, model, train_batches, eval_batches):
        self.model = model
        self.train_batches, self.eval_batches = train_batches, eval_batches
        self.optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)

    def loss(self, batch):
        logits = self.model(batch[:, :-1])
        return F.cross_entropy(logits.flatten(0, 1), batch[:, 1:].flatten())

    @torch.inference_mode()
    def evaluate(self):
        self.model.eval()
        losses = [self.loss(batch).item() for batch in self.eval_batches]
        self.model.train()
        return sum(losses) / len(losses)

    def train(self):
        self.evaluate()
        for batch in self.train_batches:
            loss = self.loss(batch)
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()


batches = [torch.randint(0, 40, (2, 9)) for _ in range(3)]
Trainer(TinyLM(), batches[:2], batches[2:]).train()
