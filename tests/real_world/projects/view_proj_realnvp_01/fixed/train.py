import torch

from datasets import two_moons
from flows import RealNVP

torch.manual_seed(0)
data = two_moons()
flow = RealNVP(dim=4)
opt = torch.optim.Adam(flow.parameters(), lr=1e-3)
for step in range(20):
    batch = data[torch.randint(0, len(data), (32,))]
    loss = flow.nll(batch)
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step % 10 == 0:
        print(step, round(loss.item(), 4))
