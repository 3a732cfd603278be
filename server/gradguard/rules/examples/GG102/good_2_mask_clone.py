import torch

torch.manual_seed(0)
W = torch.randn(4, 6, requires_grad=True)
x = torch.randn(8, 6)
y = torch.randn(8, 4)
for _ in range(3):
    W_pruned = W.clone()
    W_pruned[:, 4:] = 0.0
    loss = ((x @ W_pruned.t() - y) ** 2).mean()
    loss.backward()
print(W.grad[:, 4:].abs().sum())
