# expect-kind: silent-write
import torch

w = torch.tensor([1.0, 2.0], requires_grad=True)
e = w.exp()  # expect: save
e.data.mul_(0)  # expect: write
e.sum().backward()
print("grad", w.grad.tolist())
