# expect-kind: stale-save
import torch

w = torch.rand(2, 3, requires_grad=True)
y = w * 2
cols = y.t()
z = torch.cos(cols)  # expect: save
y[0, 0] = 0.0  # expect: write
z.sum().backward()
