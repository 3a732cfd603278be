import torch
import torch.nn as nn

torch.manual_seed(0)


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(5, 8), nn.Tanh(), nn.Linear(8, 1))

    def forward(self, x):
        x = x.clone()
        x[2:5, ...] += 1
        return self.body(x)


def optimise_input(net, steps=3):
    x = torch.zeros(8, 5, requires_grad=True)
    opt = torch.optim.Adam([x], lr=0.1)
    for _ in range(steps):
        activation = net(x).sum()
        opt.zero_grad()
        (-activation).backward()
        opt.step()
    return x.detach()


net = Model()
net.eval()
optimise_input(net)
