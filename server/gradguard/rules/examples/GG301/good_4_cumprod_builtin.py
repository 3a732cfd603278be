import torch

torch.manual_seed(0)
logits = torch.randn(5, requires_grad=True)
hazard = torch.sigmoid(logits)
survival = torch.cumprod(1 - hazard, dim=0)
loss = -torch.log(survival[-1])
loss.backward()
