import copy

import torch
from torch import nn

torch.manual_seed(0)
hidden, out_layer = nn.Linear(5, 8), nn.Linear(8, 3)
opt = torch.optim.SGD([*hidden.parameters(), *out_layer.parameters()], lr=0.5, fused=True)
x = torch.randn(12, 5)
y = torch.randint(0, 3, (12,))
teacher = torch.softmax(torch.randn(12, 3), dim=1)
ref_hidden, ref_out = copy.deepcopy(hidden), copy.deepcopy(out_layer)
logits = out_layer(torch.relu(hidden(x)))
hard_loss = nn.functional.cross_entropy(logits, y)
hard_loss.backward(retain_graph=True)
opt.step()  # <- GG502
opt.zero_grad()
soft_loss = nn.functional.kl_div(torch.log_softmax(logits, dim=1), teacher, reduction="batchmean")
soft_loss.backward()

ref_logits = ref_out(torch.relu(ref_hidden(x)))
ref_soft = nn.functional.kl_div(torch.log_softmax(ref_logits, dim=1), teacher, reduction="batchmean")
true_grad, = torch.autograd.grad(ref_soft, ref_hidden.weight)
if not torch.allclose(hidden.weight.grad, true_grad):
    print("wrong gradient:", (hidden.weight.grad - true_grad).abs().max().item())
