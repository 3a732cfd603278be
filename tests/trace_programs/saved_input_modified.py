# expect-kind: stale-save
import torch

w = torch.rand(3, requires_grad=True)
y = w * 2
z = y.sin()  # expect: save
y.add_(1)  # expect: write
z.sum().backward()
