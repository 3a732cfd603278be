# expect-kind: torch-error
# expect-error: Output 0 of Unbind is a view and is being modified inplace
import torch

y = torch.rand(2, 3, requires_grad=True) * 2
a, b = y.unbind()
a.mul_(2)  # expect: raised
(a * b).sum().backward()
