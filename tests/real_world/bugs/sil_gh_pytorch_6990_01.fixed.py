import torch

a = torch.tensor([1, 2, 3.], requires_grad=True)
out = a.sigmoid()
c = out.detach().clone()  # a copy: zeroing it leaves the saved output alone
c.zero_()

out.sum().backward()

# d/da sigmoid(a) = sigmoid(a) * (1 - sigmoid(a)), with the values the forward pass used
with torch.no_grad():
    s = torch.tensor([1, 2, 3.]).sigmoid()
    expected = s * (1 - s)
if not torch.allclose(a.grad, expected):
    print(f"wrong gradient: a.grad = {a.grad.tolist()}, expected {expected.tolist()}")
else:
    print("gradient ok")
