import torch

torch.manual_seed(0)
A = torch.randn(3, 3, requires_grad=True)
B = A * 1.5
Bt = B.detach().t().clone()
Bt.add_(torch.eye(3))
loss = (B @ Bt).trace()
loss.backward()
