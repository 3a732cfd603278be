import torch
from torch import nn

encoder = nn.Linear(4, 8)
head = nn.Linear(8, 2)
x = torch.randn(5, 4)
with torch.inference_mode():
    features = torch.relu(encoder(x))
features = features.clone()  # a normal tensor again
loss = head(features).pow(2).mean()
loss.backward()
