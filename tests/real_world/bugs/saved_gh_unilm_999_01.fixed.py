import math

import torch
import torch.nn as nn

torch.manual_seed(0)


class SamePad(nn.Module):
    def __init__(self, kernel_size):
        super().__init__()
        self.remove = 1 if kernel_size % 2 == 0 else 0

    def forward(self, x):
        if self.remove > 0:
            x = x[:, :, : -self.remove]
        return x


class TransformerEncoder(nn.Module):
    def __init__(self, embedding_dim=8, conv_pos=4, conv_pos_groups=2, num_layers=1):
        super().__init__()
        self.pos_conv = nn.Conv1d(embedding_dim, embedding_dim, kernel_size=conv_pos, padding=conv_pos // 2,
                                  groups=conv_pos_groups)
        std = math.sqrt(4 / (conv_pos * embedding_dim))
        nn.init.normal_(self.pos_conv.weight, mean=0, std=std)
        nn.init.constant_(self.pos_conv.bias, 0)
        self.pos_conv = nn.Sequential(self.pos_conv, SamePad(conv_pos), nn.GELU())
        self.layers = nn.ModuleList(
            nn.TransformerEncoderLayer(embedding_dim, 2, 16, dropout=0.0, batch_first=True) for _ in range(num_layers))
        self.layer_norm = nn.LayerNorm(embedding_dim)

    def forward(self, x, padding_mask=None):
        return self.extract_features(x, padding_mask)

    def extract_features(self, x, padding_mask=None):
        if padding_mask is not None:
            x[padding_mask] = 0
        x_conv = self.pos_conv(x.transpose(1, 2))
        x_conv = x_conv.transpose(1, 2)
        x = x.clone() + x_conv
        x = self.layer_norm(x)
        for layer in self.layers:
            x = layer(x)
        return x


class BEATs(nn.Module):
    def __init__(self):
        super().__init__()
        self.post_extract_proj = nn.Linear(6, 8)
        self.encoder = TransformerEncoder()

    def extract_features(self, features):
        features = self.post_extract_proj(features)
        return self.encoder(features)


model = BEATs()
opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
out = model.extract_features(torch.randn(2, 5, 6))
loss = out.pow(2).mean()
opt.zero_grad()
loss.backward()
opt.step()
