import torch
from torch import nn

torch.manual_seed(0)
backbone = nn.Linear(8, 8)
with torch.inference_mode():
    tokens = backbone(torch.randn(2, 5, 8))  # cached features from a frozen backbone
# batch-first, post-norm (the defaults but batch_first): the attention projects a transposed copy and the residual
# adds, so torch 2.13 saves nothing of `tokens` for backward
head = nn.TransformerEncoderLayer(8, 2, 16, batch_first=True)
head(tokens).sum().backward()
