import torch
import torch.nn as nn

from configs import SMALL
from layers import Mlp, TanhEmbed

torch.manual_seed(0)
model = nn.Sequential(TanhEmbed(5, SMALL["dim"]), Mlp(**SMALL), nn.Linear(SMALL["dim"], 1))
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
x, y = torch.randn(32, 5), torch.randn(32, 1)
for step in range(3):
    loss = nn.functional.mse_loss(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(step, loss.item())
