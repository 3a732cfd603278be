import torch
from torch import nn

torch.manual_seed(0)
model = nn.Linear(4, 3)
x = torch.randn(6, 4)
logits = model(x)
loss = logits.logsumexp(dim=1).mean()
loss.backward()
with torch.no_grad():
    first_logit = logits[:, 0]
    first_logit.mul_(2.0)
    print("mean first logit", first_logit.mean().item())
