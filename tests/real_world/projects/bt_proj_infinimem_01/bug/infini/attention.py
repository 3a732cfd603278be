import torch
import torch.nn as nn
import torch.nn.functional as F


class CompressiveMemory(nn.Module):
    def __init__(self, d=16):
        super().__init__()
        self.qkv = nn.Linear(d, 3 * d)
        self.M = None
        self.z = None

    def reset(self, d=16):
        self.M = torch.zeros(d, d)
        self.z = torch.zeros(d)

    def forward(self, x):
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        sq, sk = F.elu(q) + 1, F.elu(k) + 1
        retrieved = (sq @ self.M) / (sq @ self.z + 1e-6)[..., None]
        self._update_memory(sk, v)
        local = torch.softmax(q @ k.transpose(-1, -2), dim=-1) @ v
        return local + retrieved

    def _update_memory(self, sk, v):
        self.M = self.M + (sk.transpose(-1, -2) @ v).mean(0)
        self.z = self.z + sk.sum(dim=(0, 1))
