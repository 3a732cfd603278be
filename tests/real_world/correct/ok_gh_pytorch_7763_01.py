import torch

torch.manual_seed(0)


def so3_mixing(x, w1, w2):
    z1 = torch.einsum("ij,jk->ik", (x, w1))
    z2 = torch.einsum("ij,jk->ik", (x, w2))
    return z1, z2


x = torch.randn(3, 3, requires_grad=True)
w1, w2 = torch.randn(3, 3, requires_grad=True), torch.randn(3, 3, requires_grad=True)
opt = torch.optim.SGD([x, w1, w2], lr=0.1)
for _ in range(2):
    z1, z2 = so3_mixing(x, w1, w2)
    loss = z1.sum() + z2.pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
