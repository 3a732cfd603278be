# expect-kind: stale-save
import torch

w = torch.rand(2, 3, requires_grad=True)
y = torch.tanh(w)  # expect: save
buffer = y.detach()  # shares storage and the version counter
buffer.zero_()  # expect: write
y.sum().backward()
