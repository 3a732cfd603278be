import torch

from blocks import GatedUnit
from cfg import DEFAULTS

torch.manual_seed(0)
model = torch.nn.Sequential(GatedUnit(**DEFAULTS), torch.nn.Linear(DEFAULTS["dim"], 1))
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
x, y = torch.randn(16, 12), torch.randn(16, 1)
for step in range(3):
    loss = torch.nn.functional.mse_loss(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(step, loss.item())
