import torch

torch.manual_seed(0)
A = torch.randn(3, 3, requires_grad=True)
B = A * 1.5
with torch.no_grad():
    Bt = B.t()
Bt.add_(torch.eye(3))  # <- GG105
loss = (B @ B).trace()
loss.backward()
