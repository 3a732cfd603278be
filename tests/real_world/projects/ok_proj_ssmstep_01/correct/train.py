import torch

from ssm import DiagonalSSM

torch.manual_seed(0)
layer = DiagonalSSM()
opt = torch.optim.Adam(layer.parameters(), lr=1e-2)
stream = torch.randn(2, 18, 4)
for start in range(0, 18, 6):
    x = stream[:, start:start + 6]
    loss = ((layer(x) - x.roll(1, dims=1)) ** 2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    layer.commit_state()
    print(start, loss.item())
