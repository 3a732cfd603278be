import torch
from torch import nn

torch.manual_seed(0)
mixer = nn.Linear(6, 6, bias=False)
with torch.no_grad():
    # make the weight symmetric, W <- W^T (as a first step of W <- (W + W^T) / 2)
    mixer.weight.copy_(mixer.weight.transpose(0, 1))  # <- GG110
loss = mixer(torch.randn(3, 6)).pow(2).mean()
loss.backward()
