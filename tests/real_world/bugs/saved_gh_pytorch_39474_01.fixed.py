import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class SpatialAttentionHead(nn.Module):
    def __init__(self, channels=4, size=4, n_classes=3, drop=0.25):
        super().__init__()
        self.attn_conv = nn.Conv2d(channels, 1, 1)
        self.classifier = nn.Linear(size * size, n_classes)
        self.drop = drop

    def forward(self, x):
        attn = torch.sigmoid(self.attn_conv(x))
        flat = torch.flatten(attn, 1)
        if self.training:
            keep = (torch.rand_like(flat) > self.drop).float()
            flat = flat * keep
        return self.classifier(flat)


head = SpatialAttentionHead()
opt = torch.optim.SGD(head.parameters(), lr=0.1)
for _ in range(2):
    loss = F.cross_entropy(head(torch.randn(2, 4, 4, 4)), torch.tensor([0, 2]))
    opt.zero_grad()
    loss.backward()
    opt.step()
