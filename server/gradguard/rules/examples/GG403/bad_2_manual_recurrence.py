import torch

torch.manual_seed(0)
W = torch.randn(3, 3, requires_grad=True)
U = torch.randn(2, 3, requires_grad=True)
xs = torch.randn(4, 1, 2)
h = torch.zeros(1, 3)
for t in range(4):
    h_new = torch.tanh(h @ W + xs[t] @ U)
    loss = h_new.pow(2).sum()
    loss.backward()
    with torch.no_grad():
        W -= 0.01 * W.grad
        U -= 0.01 * U.grad
    W.grad = None
    U.grad = None
    h = h_new  # <- GG403
