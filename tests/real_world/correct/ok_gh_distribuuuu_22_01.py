import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class MHSA(nn.Module):
    def __init__(self, n_dims, heads=4):
        super().__init__()
        self.heads = heads
        self.scale = (n_dims // heads) ** -0.5
        self.qkv = nn.Conv2d(n_dims, 3 * n_dims, kernel_size=1)

    def forward(self, x, key_mask):
        n_batch, C, width, height = x.size()
        qkv = self.qkv(x).reshape(n_batch, 3, self.heads, C // self.heads, width * height)
        q, k, v = qkv.permute(1, 0, 2, 3, 4)
        q = q * self.scale
        energy = torch.matmul(q.permute(0, 1, 3, 2), k)
        energy = energy.masked_fill(key_mask[:, None, None, :], float("-inf"))
        attention = F.softmax(energy, dim=-1)
        out = torch.matmul(v, attention.permute(0, 1, 3, 2))
        return out.reshape(n_batch, C, width, height)


mhsa = MHSA(16)
head = nn.Linear(16, 10)
opt = torch.optim.SGD(list(mhsa.parameters()) + list(head.parameters()), lr=0.1)
key_mask = torch.zeros(4, 16, dtype=torch.bool)
key_mask[:, -3:] = True
for step in range(2):
    images, target = torch.randn(4, 16, 4, 4), torch.randint(0, 10, (4,))
    loss = F.cross_entropy(head(mhsa(images, key_mask).mean((2, 3))), target)
    opt.zero_grad()
    loss.backward()
    opt.step()
