# expect-kind: torch-error
# expect-error: functions with out=... arguments don't support automatic differentiation
import torch

w = torch.rand(3, requires_grad=True)
buf = torch.empty(3)
torch.sin(w, out=buf)  # expect: raised
buf.sum().backward()
