import torch.nn as nn


class MixerBlock(nn.Module):
    def __init__(self, tokens, dim, drop=0.0):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.token_mlp = nn.Sequential(nn.Linear(tokens, tokens), nn.GELU(), nn.Linear(tokens, tokens))
        self.norm2 = nn.LayerNorm(dim)
        self.channel_mlp = nn.Sequential(nn.Linear(dim, 2 * dim), nn.GELU(), nn.Linear(2 * dim, dim))

    def forward(self, x):
        x = x + self.token_mlp(self.norm1(x).transpose(1, 2)).transpose(1, 2)
        return x + self.channel_mlp(self.norm2(x))


class MixerBackbone(nn.Module):
    """Returns pooled features: blocks, a final ReLU feature map, then dropout."""

    def __init__(self, tokens=6, dim=16, depth=2, drop_rate=0.0):
        super().__init__()
        self.stem = nn.Linear(8, dim)
        self.blocks = nn.Sequential(*[MixerBlock(tokens, dim) for _ in range(depth)])
        self.act = nn.ReLU()
        self.drop = nn.Dropout(drop_rate)

    def forward(self, x):
        h = self.act(self.blocks(self.stem(x)).mean(1))
        return self.drop(h)
