import torch
from torch import nn

torch.manual_seed(0)
emb = nn.Embedding(10, 8)
emb.weight.requires_grad_(False)  # frozen embeddings, as with adapters
lin = nn.Linear(8, 8)


def make_output_require_grad(module, inputs, output):
    output.requires_grad_(True)  # what `enable_input_require_grads()` registers for gradient checkpointing


emb.register_forward_hook(make_output_require_grad)
ids = torch.randint(0, 10, (2, 5))
h = emb(ids)
h2 = lin(h)
h += 1  # <- GG101
h2.sum().backward()
