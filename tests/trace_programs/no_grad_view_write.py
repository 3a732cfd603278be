# expect-kind: torch-error
# expect-error: A view was created in no_grad mode and is being modified inplace with grad mode enabled
import torch

w = torch.rand(4, requires_grad=True)
y = w * 2
with torch.no_grad():
    head = y[:2]
head.mul_(2)  # expect: raised
y.sum().backward()
