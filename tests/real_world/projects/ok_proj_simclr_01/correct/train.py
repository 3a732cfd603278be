import torch

from losses import info_nce_loss
from models import SimCLRNet

torch.manual_seed(0)
model = SimCLRNet()
opt = torch.optim.Adam(model.parameters(), lr=3e-4)
data = torch.randn(32, 16)
for epoch in range(3):
    views = torch.cat([data + 0.1 * torch.randn_like(data), data * 0.9])
    loss = info_nce_loss(model(views))
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(epoch, loss.item())
