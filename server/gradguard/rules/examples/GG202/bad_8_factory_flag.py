import torch
from torch import nn

torch.manual_seed(0)


class Block(nn.Sequential):
    def __init__(self, dim, inplace=None, p=0.3):
        params = {} if inplace is None else {"inplace": inplace}
        super().__init__(nn.Linear(dim, dim), nn.ReLU(**params), nn.Dropout(p, **params))  # <- GG202


block = Block(5, inplace=True)
block(torch.randn(2, 5)).sum().backward()
