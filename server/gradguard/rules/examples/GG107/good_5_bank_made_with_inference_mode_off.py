import torch
from torch import nn

torch.manual_seed(0)
encoder = nn.Linear(4, 3)
with torch.inference_mode():
    feats = encoder(torch.randn(2, 4))
    with torch.inference_mode(False):  # tensors made here are normal tensors
        bank = torch.zeros(8, 3)
bank[:2] = encoder(torch.randn(2, 4)).detach()
loss = (encoder(torch.randn(2, 4)) @ bank.T).sum()
loss.backward()
