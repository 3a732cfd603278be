import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Backbone(nn.Module):
    def __init__(self, dim=16):
        super().__init__()
        self.patch_embed = nn.Conv2d(3, dim, 4, stride=4)
        self.block = nn.Sequential(nn.LayerNorm(dim), nn.Linear(dim, dim), nn.GELU(), nn.Linear(dim, dim))

    def forward(self, x):
        tokens = self.patch_embed(x).flatten(2).transpose(1, 2)
        return tokens + self.block(tokens)


class DepthHead(nn.Module):
    def __init__(self, dim=16, bins=8):
        super().__init__()
        self.conv = nn.Linear(dim, bins)
        self.bins = torch.linspace(0.1, 10.0, bins)

    def forward(self, tokens):
        return (self.conv(tokens).softmax(-1) * self.bins).sum(-1)


with torch.inference_mode():
    backbone = Backbone()
    head = DepthHead()
    depther = nn.Sequential(backbone, head)
    image = torch.randn(1, 3, 16, 16)
    depth = depther(image)

depther.train()
optimizer = torch.optim.AdamW(depther.parameters(), lr=1e-4)
for _ in range(2):
    images, depth_gt = torch.randn(2, 3, 16, 16), torch.rand(2, 16) * 10
    loss = F.l1_loss(depther(images), depth_gt)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
