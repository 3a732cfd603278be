import torch

torch.manual_seed(0)
logits = torch.randn(5, requires_grad=True)
hazard = torch.sigmoid(logits)
survival = torch.ones(6)
for t in range(5):
    survival[t + 1] = survival[t].mul(1 - hazard[t])  # <- GG301
loss = -torch.log(survival[-1])
loss.backward()
