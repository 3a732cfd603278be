import torch
from torch import nn

torch.manual_seed(0)
backbone = nn.Linear(8, 8)
with torch.inference_mode():
    tokens = backbone(torch.randn(2, 5, 8))
head = nn.TransformerEncoderLayer(8, 2, 16, batch_first=True, norm_first=True)
head(tokens).sum().backward()  # <- GG106
