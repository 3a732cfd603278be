import torch
from torch import nn

torch.manual_seed(0)
emb = nn.Embedding(10, 8)
emb.weight.requires_grad_(False)
lin = nn.Linear(8, 8)


def make_output_require_grad(module, inputs, output):
    output.requires_grad_(True)


emb.register_forward_hook(make_output_require_grad)
ids = torch.randint(0, 10, (2, 5))
h = emb(ids)
h = h + 1
lin(h).sum().backward()
