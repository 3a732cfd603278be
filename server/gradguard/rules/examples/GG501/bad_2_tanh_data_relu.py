import torch

torch.manual_seed(0)
W = torch.randn(3, 4, requires_grad=True)
x = torch.randn(5, 3)
h = torch.tanh(x @ W)
h.data[h.data < 0] = 0.0  # <- GG501
loss = h.sum()
loss.backward()

h_true = torch.relu(torch.tanh(x @ W))
true_grad, = torch.autograd.grad(h_true.sum(), W)
if not torch.allclose(W.grad, true_grad):
    print("wrong gradient:", (W.grad - true_grad).abs().max().item())
