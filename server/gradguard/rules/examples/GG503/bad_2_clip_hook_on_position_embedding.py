import torch
from torch import nn

torch.manual_seed(0)
vocab, length, dim = 10, 5, 8
token_embedding = nn.Embedding(vocab, dim)
position_embedding = nn.Parameter(torch.randn(length, dim))


def clip_position_grad(grad):
    grad.clamp_(-0.05, 0.05)  # <- GG503


position_embedding.register_hook(clip_position_grad)
tokens = torch.tensor([1, 4, 2, 7, 3])
head = nn.Linear(dim, 1)
x = token_embedding(tokens) + position_embedding
head(torch.tanh(x)).sum().backward()

# the token embedding's gradient does not depend on a hook on the position embedding
ref = token_embedding(tokens) + position_embedding.detach()
true_grad, = torch.autograd.grad(head(torch.tanh(ref)).sum(), token_embedding.weight)
if not torch.allclose(token_embedding.weight.grad, true_grad):
    print("wrong gradient:", (token_embedding.weight.grad - true_grad).abs().max().item())
