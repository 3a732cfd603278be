import torch

torch.manual_seed(0)
w = torch.randn(4, requires_grad=True)
feats = torch.randn(6, 4) * 3 + 1
x = feats * 1.0
scores = torch.sigmoid(x @ w)
x.data.sub_(x.data.mean(dim=0))  # <- GG501
loss = scores.mean()
loss.backward()

true_grad, = torch.autograd.grad(torch.sigmoid(feats @ w).mean(), w)
if not torch.allclose(w.grad, true_grad):
    print("wrong gradient:", (w.grad - true_grad).abs().max().item())
