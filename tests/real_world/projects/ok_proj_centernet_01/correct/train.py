import torch

from losses import focal_loss
from models import CenterHead
from utils import _sigmoid

torch.manual_seed(0)
model = CenterHead()
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
x = torch.randn(32, 8)
gt = (x[:, :1] > 0.5).float()
for epoch in range(3):
    hm = _sigmoid(model(x))
    loss = focal_loss(hm, gt)
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(epoch, loss.item())
