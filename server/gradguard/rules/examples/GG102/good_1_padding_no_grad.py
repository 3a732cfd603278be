import torch

torch.manual_seed(0)
vocab, dim, pad = 10, 4, 0
emb = torch.randn(vocab, dim, requires_grad=True)
with torch.no_grad():
    emb[pad] = 0.0
tokens = torch.tensor([[1, 2, 0], [3, 0, 0]])
vectors = emb[tokens]
loss = vectors.sum(dim=1).pow(2).mean()
loss.backward()
