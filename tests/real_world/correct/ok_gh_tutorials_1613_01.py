import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class SelfAttention(nn.Module):
    def __init__(self, dim=8, heads=2, residual_scale=0.5):
        super().__init__()
        self.heads, self.residual_scale = heads, residual_scale
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.qkv(x).view(B, T, 3, self.heads, C // self.heads).permute(2, 0, 3, 1, 4).unbind(0)
        att = torch.softmax(q @ k.transpose(-2, -1) / (C // self.heads) ** 0.5, dim=-1)
        out = (att @ v).transpose(1, 2).contiguous()
        out.mul_(self.residual_scale)
        return x + self.proj(out.view(B, T, C))


attn = SelfAttention()
opt = torch.optim.AdamW(attn.parameters(), lr=1e-3)
for _ in range(2):
    loss = attn(torch.randn(2, 5, 8)).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
