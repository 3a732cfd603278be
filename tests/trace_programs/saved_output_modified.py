# expect-kind: stale-save
import torch

w = torch.rand(3, requires_grad=True)
y = w.exp()  # expect: save
y *= 2  # expect: write
y.sum().backward()
