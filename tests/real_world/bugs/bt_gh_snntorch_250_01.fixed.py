import torch
import torch.nn as nn

torch.manual_seed(0)


class Leaky(nn.Module):
    """snntorch.Leaky reduced: init_hidden=True keeps the membrane potential on the module."""

    def __init__(self, beta, init_hidden=True, output=True):
        super().__init__()
        self.beta = beta
        self.mem = torch.zeros(1)

    def forward(self, input_):
        self.mem = self.beta * self.mem + input_
        spk = torch.sigmoid(5 * (self.mem - 1.0))
        return spk, self.mem


def reset(net):
    for m in net.modules():
        if isinstance(m, Leaky):
            m.mem = torch.zeros(1)


net = nn.Sequential(nn.Conv2d(1, 2, 3), nn.Flatten(), nn.Linear(2 * 4 * 4, 3))
lif = Leaky(beta=0.5)
num_steps = 3


def forward_pass(net, num_steps, data):
    mem_rec = []
    spk_rec = []
    reset(lif)  # resets hidden states for all LIF neurons in net
    for step in range(num_steps):
        spk_out, mem_out = lif(net(data))
        spk_rec.append(spk_out)
        mem_rec.append(mem_out)
    return torch.stack(spk_rec), torch.stack(mem_rec)


optimizer = torch.optim.Adam(net.parameters(), lr=1e-2)
loss_fn = nn.MSELoss()
train_loader = [(torch.rand(2, 1, 6, 6), torch.rand(2, 3)) for _ in range(2)]
for data, targets in train_loader:
    spk_rec, mem_rec = forward_pass(net, num_steps, data)
    loss_val = loss_fn(spk_rec.sum(0), targets)
    optimizer.zero_grad()
    loss_val.backward()
    optimizer.step()
