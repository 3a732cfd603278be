import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class FeatureBank:
    def __init__(self, size):
        self.size = size
        self.bank = None
        self.ptr = 0

    def ensure(self, feats):
        if self.bank is None:
            with torch.inference_mode(False):
                self.bank = torch.zeros(self.size, feats.size(1))
        return self.bank

    def enqueue(self, feats):
        bank = self.ensure(feats)
        n = feats.size(0)
        bank[self.ptr:self.ptr + n] = feats
        self.ptr = (self.ptr + n) % self.size


class Contrastive(nn.Module):
    def __init__(self, dim=8, bank_size=16):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(12, 16), nn.ReLU(), nn.Linear(16, dim))
        self.bank = FeatureBank(bank_size)

    def forward(self, x1, x2, tau=0.2):
        q = F.normalize(self.encoder(x1), dim=1)
        k = F.normalize(self.encoder(x2), dim=1)
        negatives = self.bank.ensure(q).clone().detach()
        logits = torch.cat([(q * k).sum(1, keepdim=True), q @ negatives.T], dim=1) / tau
        return F.cross_entropy(logits, torch.zeros(q.size(0), dtype=torch.long)), k


model = Contrastive()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
with torch.inference_mode():
    model(torch.randn(4, 12), torch.randn(4, 12))
for step in range(2):
    x = torch.randn(4, 12)
    loss, keys = model(x, x + 0.1 * torch.randn(4, 12))
    opt.zero_grad()
    loss.backward()
    opt.step()
    with torch.no_grad():
        model.bank.enqueue(keys.detach())
