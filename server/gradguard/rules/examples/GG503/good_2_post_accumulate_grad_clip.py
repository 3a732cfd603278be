import torch
from torch import nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))


def clip_accumulated(param):
    # runs after the gradient was accumulated into param.grad, which belongs to this parameter alone
    param.grad.clamp_(-0.1, 0.1)


for p in model.parameters():
    p.register_post_accumulate_grad_hook(clip_accumulated)

model(torch.randn(5, 4)).sum().backward()
print(max(p.grad.abs().max().item() for p in model.parameters()))
