import torch

torch.manual_seed(0)
n = 20
x = torch.ones(n, 2)
x[:, 0].uniform_(-1., 1)
a_true = torch.tensor([3., 2.])
y = x @ a_true + torch.rand(n)


def mse(y_hat, y):
    return ((y_hat - y) ** 2).mean()


a = torch.tensor([-5., 5.], requires_grad=True)
lr = 1e-1


def update(t):
    y_hat = x @ a
    loss = mse(y, y_hat)
    if t % 10 == 0:
        print(loss)
    loss.backward()
    with torch.no_grad():
        a.sub_(lr * a.grad)
        a.grad.zero_()


for t in range(20):
    update(t)
