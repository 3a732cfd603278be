import torch

torch.manual_seed(0)
rates = torch.rand(4, requires_grad=True)
level = torch.ones(5)
for t in range(4):
    level[t + 1] = torch.exp(torch.log(level[t]) + rates[t])  # <- GG301
loss = level[-1]
loss.backward()
