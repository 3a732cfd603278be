import copy

import torch
from torch import nn

torch.manual_seed(0)
body, head = nn.Linear(4, 8), nn.Linear(8, 2)
opt = torch.optim.AdamW([*body.parameters(), *head.parameters()], lr=0.1, fused=True)
obs = torch.randn(5, 4)
actions = torch.tensor([0, 1, 1, 0, 1])
rewards = torch.tensor([1.0, -1.0, 0.5, 0.2, 1.0])
ref_body, ref_head = copy.deepcopy(body), copy.deepcopy(head)
log_probs = torch.log_softmax(head(torch.tanh(body(obs))), dim=1)
pg_loss = -(log_probs[torch.arange(5), actions] * rewards).mean()
entropy = -(log_probs.exp() * log_probs).sum(dim=1).mean()
pg_loss.backward(retain_graph=True)
opt.step()  # <- GG502
opt.zero_grad()
(-entropy).backward()

ref_lp = torch.log_softmax(ref_head(torch.tanh(ref_body(obs))), dim=1)
true_grad, = torch.autograd.grad((ref_lp.exp() * ref_lp).sum(dim=1).mean(), ref_body.weight)
if not torch.allclose(body.weight.grad, true_grad):
    print("wrong gradient:", (body.weight.grad - true_grad).abs().max().item())
