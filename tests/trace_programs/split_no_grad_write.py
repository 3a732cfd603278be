# expect-kind: torch-error
# expect-error: is a view and its base or another view of its base has been modified inplace
import torch

y = torch.rand(4, 3, requires_grad=True) * 2
first, second = y.split(2)
with torch.no_grad():
    first.mul_(2)
(first * 3).sum().backward()  # expect: raised
