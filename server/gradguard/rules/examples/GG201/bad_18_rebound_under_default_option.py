# A confidence head (glue-factory): `probabilities=True` by default rebinds the layer to Linear + Sigmoid
import torch
from torch import nn


class TokenConfidence(nn.Module):
    def __init__(self, dim, probabilities=True, eps=1e-6):
        super().__init__()
        self.token = nn.Linear(dim, 1)
        if probabilities:
            self.token = nn.Sequential(self.token, nn.Sigmoid())
        self.eps = eps

    def forward(self, desc):
        conf = self.token(desc.detach()).squeeze(-1)
        return conf.clamp_(self.eps, 1 - self.eps)  # <- GG201


torch.manual_seed(0)
head = TokenConfidence(8)
conf = head(torch.randn(4, 8))
conf.log().sum().backward()
