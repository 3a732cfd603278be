import torch
from torch import nn

torch.manual_seed(0)
critic = nn.Sequential(nn.Linear(2, 8), nn.ReLU(), nn.Linear(8, 1))
opt = torch.optim.RMSprop(critic.parameters(), lr=5e-3)
real = torch.randn(6, 2) + 2
for step in range(3):
    fake = torch.randn(6, 2)
    wdist = critic(real).mean() - critic(fake).mean()
    opt.zero_grad()
    (-wdist).backward()
    opt.step()
    for p in critic.parameters():
        p.data.clamp_(-0.01, 0.01)
