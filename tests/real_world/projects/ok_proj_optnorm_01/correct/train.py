import torch
import torch.nn as nn

from configs import SMALL, TINY
from layers import Mlp, TanhEmbed

torch.manual_seed(0)
for cfg in (SMALL, TINY):
    model = nn.Sequential(TanhEmbed(5, cfg["dim"]), Mlp(**cfg), nn.Linear(cfg["dim"], 1))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    x, y = torch.randn(32, 5), torch.randn(32, 1)
    for step in range(2):
        loss = nn.functional.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    print(cfg, loss.item())
