import torch

torch.manual_seed(0)
a = torch.randn(5, requires_grad=True)
out = a.sigmoid()
buffer = out.data
buffer.zero_()  # <- GG501
out.sum().backward()

true_grad, = torch.autograd.grad(torch.sigmoid(a).sum(), a)
if not torch.allclose(a.grad, true_grad):
    print("wrong gradient:", (a.grad - true_grad).abs().max().item())
