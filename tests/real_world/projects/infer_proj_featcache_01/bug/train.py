import torch
import torch.nn.functional as F

from features.cache import FeatureCache
from features.encoder import frozen_encoder
from probe import LinearProbe

torch.manual_seed(0)
cache = FeatureCache(frozen_encoder())
probe = LinearProbe()
opt = torch.optim.SGD(probe.parameters(), lr=0.1)
inputs = torch.randn(40, 12)
labels = torch.randint(0, 5, (40,))
for epoch in range(2):
    for start in range(0, 40, 10):
        ids = torch.arange(start, start + 10)
        feats = cache.get(start, inputs[ids])
        loss = F.cross_entropy(probe(feats), labels[ids])
        opt.zero_grad()
        loss.backward()
        opt.step()
    print(epoch, loss.item())
