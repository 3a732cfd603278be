import torch
import torch.nn as nn

from augment import two_views
from losses import info_nce
from models import Encoder, ProjectionHead

torch.manual_seed(0)
g = torch.Generator().manual_seed(1)
model = nn.Sequential(Encoder(), ProjectionHead())
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
data = torch.randn(64, 16)
for epoch in range(2):
    for i in range(0, 64, 16):
        v1, v2 = two_views(data[i:i + 16], g)
        loss = info_nce(model(v1), model(v2))
        opt.zero_grad()
        loss.backward()
        opt.step()
    print("epoch", epoch, loss.item())
