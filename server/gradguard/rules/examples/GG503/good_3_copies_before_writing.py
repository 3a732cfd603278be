import torch
from torch import nn

torch.manual_seed(0)
vocab, length, dim = 10, 5, 8
token_embedding = nn.Embedding(vocab, dim)
position_embedding = nn.Parameter(torch.randn(length, dim))
frozen_rows = torch.tensor([True, False, False, False, True])


def freeze_rows(grad):
    grad = grad.clone()  # the incoming gradient is shared with the token embedding's branch
    grad[frozen_rows] = 0
    return grad


def halve_branch(module, grad_output):
    return (grad_output[0] * 0.5,)


position_embedding.register_hook(freeze_rows)
head = nn.Linear(dim, 1)
head.register_full_backward_pre_hook(halve_branch)
x = token_embedding(torch.tensor([1, 4, 2, 7, 3])) + position_embedding
head(torch.tanh(x)).sum().backward()
print(position_embedding.grad[0].abs().sum().item(), token_embedding.weight.grad.norm().item())
