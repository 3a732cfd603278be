import torch

# the toy from the "Wrong Implementation" thread, with the scaling recorded by autograd
a = torch.tensor([2.0], requires_grad=True)
b = torch.tensor([3.0], requires_grad=True)
c = b * 4
c = c * 4
loss = a * c
loss.backward()
print(a.grad)

# the value the forward used for c is 3 * 4 * 4 = 48, so d loss / d a should be 48
expected = torch.tensor([48.0])
if not torch.allclose(a.grad, expected):
    print(f"wrong gradient: a.grad = {a.grad.tolist()}, expected {expected.tolist()}")
if not torch.allclose(b.grad, torch.tensor([2.0 * 16])):
    print(f"wrong gradient: b.grad = {b.grad.tolist()}, expected [32.0]")
