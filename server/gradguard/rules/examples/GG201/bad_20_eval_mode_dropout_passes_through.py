import torch
from torch import nn


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)
        self.act = nn.Sigmoid()
        self.drop = nn.Dropout(0.1)

    def forward(self, x):
        return self.drop(self.act(self.fc(x)))


torch.manual_seed(0)
encoder = Encoder()
encoder.eval()  # dropout off while fine-tuning: in eval mode it returns the sigmoid's output itself
head = nn.Linear(8, 2)
feats = encoder(torch.randn(4, 8))
feats += 0.5  # <- GG201
head(feats).sum().backward()
