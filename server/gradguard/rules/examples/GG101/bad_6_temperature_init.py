import math

import torch

torch.manual_seed(0)
img = nn_img = torch.randn(4, 8)
txt = torch.randn(4, 8)
log_scale = torch.zeros(1, requires_grad=True)
log_scale += math.log(1 / 0.07)  # <- GG101
logits = (img @ txt.t()) * log_scale.exp()
labels = torch.arange(4)
loss = torch.nn.functional.cross_entropy(logits, labels)
loss.backward()
