import torch

torch.manual_seed(0)


def affine_loss(x, target):
    y = x * 2
    y += 1
    return torch.sum((y - target) ** 2)


x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
opt = torch.optim.SGD([x], lr=0.01)
for _ in range(3):
    z = affine_loss(x, torch.tensor([3.0, 5.0, 8.0]))
    opt.zero_grad()
    z.backward()
    opt.step()
