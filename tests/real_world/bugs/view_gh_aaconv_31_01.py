import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class AugmentedConv(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, dk, dv, Nh):
        super().__init__()
        self.dk, self.dv, self.Nh = dk, dv, Nh
        self.conv_out = nn.Conv2d(in_channels, out_channels - dv, kernel_size, padding=kernel_size // 2)
        self.qkv_conv = nn.Conv2d(in_channels, 2 * dk + dv, kernel_size=1)
        self.attn_out = nn.Conv2d(dv, dv, kernel_size=1)

    def split_heads_2d(self, x, Nh):
        batch, channels, height, width = x.size()
        return x.reshape(batch, Nh, channels // Nh, height, width)

    def compute_flat_qkv(self, x, dk, dv, Nh):
        qkv = self.qkv_conv(x)
        N, _, H, W = qkv.size()
        q, k, v = torch.split(qkv, [dk, dk, dv], dim=1)
        q = self.split_heads_2d(q, Nh)
        k = self.split_heads_2d(k, Nh)
        v = self.split_heads_2d(v, Nh)
        dkh = dk // Nh
        q *= dkh ** -0.5
        flat_q = torch.reshape(q, (N, Nh, dk // Nh, H * W))
        flat_k = torch.reshape(k, (N, Nh, dk // Nh, H * W))
        flat_v = torch.reshape(v, (N, Nh, dv // Nh, H * W))
        return flat_q, flat_k, flat_v

    def forward(self, x):
        conv_out = self.conv_out(x)
        batch, _, height, width = conv_out.size()
        flat_q, flat_k, flat_v = self.compute_flat_qkv(x, self.dk, self.dv, self.Nh)
        logits = torch.matmul(flat_q.transpose(2, 3), flat_k)
        weights = F.softmax(logits, dim=-1)
        attn_out = torch.matmul(weights, flat_v.transpose(2, 3))
        attn_out = attn_out.transpose(2, 3).reshape(batch, self.dv, height, width)
        return torch.cat((conv_out, self.attn_out(attn_out)), dim=1)


model = nn.Sequential(nn.Conv2d(1, 3, 3, padding=1), nn.ReLU(), AugmentedConv(3, 20, 3, dk=8, dv=4, Nh=4),
                      nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(20, 2))
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
for _ in range(2):
    x, y = torch.randn(2, 1, 8, 8), torch.tensor([0, 1])
    loss = F.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
