import torch
from torch import nn
import torch.nn.functional as F


class MoCo(nn.Module):
    def __init__(self, dim=8, k=16):
        super().__init__()
        self.encoder_q = nn.Linear(4, dim)
        self.encoder_k = nn.Linear(4, dim)
        self.register_buffer("queue", F.normalize(torch.randn(dim, k), dim=0))
        self.ptr = 0

    def forward(self, im_q, im_k):
        q = F.normalize(self.encoder_q(im_q), dim=1)
        with torch.no_grad():
            k = F.normalize(self.encoder_k(im_k), dim=1)
        l_pos = (q * k).sum(1, keepdim=True)
        l_neg = q @ self.queue
        logits = torch.cat([l_pos, l_neg], dim=1) / 0.07
        n = k.shape[0]
        self.queue[:, self.ptr:self.ptr + n] = k.T
        self.ptr = (self.ptr + n) % self.queue.shape[1]
        return logits


torch.manual_seed(0)
model = MoCo()
opt = torch.optim.SGD(model.encoder_q.parameters(), lr=0.1)
for step in range(3):
    x = torch.randn(4, 4)
    logits = model(x, x + 0.1 * torch.randn(4, 4))
    loss = F.cross_entropy(logits, torch.zeros(4, dtype=torch.long))
    opt.zero_grad()
    loss.backward()
    opt.step()
