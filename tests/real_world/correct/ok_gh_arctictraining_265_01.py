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
        scores = (q @ k.transpose(-2, -1) / C ** 0.5).masked_fill(self.causal_mask(T), float("-inf"))
        return self.proj(scores.softmax(-1) @ v)


class Trainer:
    def __init__(self, model, head, train_batches, eval_batches):
        self.model, self.head = model, head
        self.train_batches, self.eval_batches = train_batches, eval_batches
        self.optimizer = torch.optim.AdamW(list(model.parameters()) + list(head.parameters()), lr=1e-3)

    def loss(self, x, y):
        return F.mse_loss(self.head(self.model(x)), y)

    @torch.no_grad()
    def evaluate(self):
        self.model.eval()
        losses = [self.loss(x, y).item() for x, y in self.eval_batches]
        self.model.train()
        return sum(losses) / len(losses)

    def train(self):
        self.evaluate()
        for x, y in self.train_batches:
            loss = self.loss(x, y)
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()


batches = [(torch.randn(2, 8, 16), torch.randn(2, 8, 1)) for _ in range(3)]
Trainer(CausalSelfAttention(16), nn.Linear(16, 1), batches[:2], batches[2:]).train()
