import torch

torch.manual_seed(0)
W = torch.randn(3, 4, requires_grad=True)
x = torch.randn(5, 3)
h = torch.tanh(x @ W)
snapshot = h.data.clone()
snapshot[snapshot < 0] = 0.0
loss = h.sum()
loss.backward()
print(snapshot.mean().item(), W.grad.norm().item())
