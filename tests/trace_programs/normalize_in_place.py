# expect-kind: stale-save
import torch

torch.manual_seed(0)
w = torch.randn(4, 3, requires_grad=True)
z = w @ torch.randn(3, 5)
z /= z.norm(dim=1, keepdim=True)  # expect: save, write
z.sum().backward()
