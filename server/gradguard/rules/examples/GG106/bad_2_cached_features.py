import torch
from torch import nn

torch.manual_seed(0)
encoder = nn.Linear(4, 8)
head = nn.Linear(8, 2)
x = torch.randn(5, 4)
# features cached once "for speed" under inference mode, then used to train the head
with torch.inference_mode():
    features = torch.relu(encoder(x))
logits = head(features)  # <- GG106
loss = nn.functional.cross_entropy(logits, torch.tensor([0, 1, 0, 1, 1]))
loss.backward()
