import torch

torch.manual_seed(0)
steps = torch.randn(5, requires_grad=True)
pos = torch.zeros(6)
for t in range(5):
    pos[t + 1] = pos[t] + steps[t]
loss = (pos[-1] - 1.0).pow(2)
loss.backward()
