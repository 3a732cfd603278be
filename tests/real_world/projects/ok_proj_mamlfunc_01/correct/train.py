import math

import torch

from maml.functional import forward
from maml.utils import gradient_update_parameters

torch.manual_seed(0)
params = {
    "w1": torch.nn.Parameter(torch.randn(40, 1) * 0.5), "b1": torch.nn.Parameter(torch.zeros(40)),
    "w2": torch.nn.Parameter(torch.randn(1, 40) * 0.1), "b2": torch.nn.Parameter(torch.zeros(1)),
}
meta_opt = torch.optim.Adam(params.values(), lr=1e-3)
for it in range(3):
    amp, phase = 1 + torch.rand(1), math.pi * torch.rand(1)
    x = 10 * torch.rand(20, 1) - 5
    y = amp * torch.sin(x + phase)
    fast = gradient_update_parameters(params, x[:10], y[:10])
    meta_loss = torch.nn.functional.mse_loss(forward(fast, x[10:]), y[10:])
    meta_opt.zero_grad()
    meta_loss.backward()
    meta_opt.step()
    print(it, meta_loss.item())
