# expect-kind: stale-save
# The op that saves its output and the in-place write that changes it, chained on one line.
import torch

torch.manual_seed(0)
w = torch.randn(4, 4, requires_grad=True)
x = torch.randn(3, 4)
gate = torch.sigmoid(x @ w).relu_()  # expect: save, write
gate.sum().backward()
