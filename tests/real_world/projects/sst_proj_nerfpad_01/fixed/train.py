import torch

from nerf.field import RadianceField
from nerf.render import volume_render
from rays import random_rays

torch.manual_seed(0)
g = torch.Generator().manual_seed(0)
field = RadianceField()
opt = torch.optim.Adam(field.parameters(), lr=5e-3)
for it in range(4):
    origins, dirs, target = random_rays(64, g)
    pred = volume_render(field, origins, dirs)
    loss = ((pred - target) ** 2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(it, loss.item())
