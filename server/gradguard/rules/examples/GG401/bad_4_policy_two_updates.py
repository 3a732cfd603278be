import torch
from torch import nn

torch.manual_seed(0)
body = nn.Linear(4, 8)
head = nn.Linear(8, 2)
opt = torch.optim.SGD([*body.parameters(), *head.parameters()], lr=0.01)
obs = torch.randn(5, 4)
actions = torch.tensor([0, 1, 1, 0, 1])
rewards = torch.tensor([1.0, -1.0, 0.5, 0.2, 1.0])
log_probs = torch.log_softmax(head(torch.tanh(body(obs))), dim=1)
chosen = log_probs[torch.arange(5), actions]
pg_loss = -(chosen * rewards).mean()
entropy = -(log_probs.exp() * log_probs).sum(dim=1).mean()
opt.zero_grad()
pg_loss.backward(retain_graph=True)
opt.step()  # <- GG401
opt.zero_grad()
(-0.01 * entropy).backward()
opt.step()
