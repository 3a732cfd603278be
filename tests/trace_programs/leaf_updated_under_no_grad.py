# expect-kind: stale-save
import torch

w = torch.rand(3, requires_grad=True)
loss = (w * w).sum()  # expect: save
with torch.no_grad():
    w.mul_(0.5)  # expect: write
loss.backward()
