import torch


def batches(X, Y, batch_size):
    idx = torch.randperm(len(X))
    for i in range(0, len(X), batch_size):
        j = idx[i:i + batch_size]
        yield X[j], Y[j]


torch.manual_seed(0)
X = torch.randn(40, 2)
true_W = torch.randn(2, 1, requires_grad=True)
Y = (X @ true_W + 0.1).detach()
W = torch.zeros(2, 1, requires_grad=True)
for epoch in range(2):
    for x, y in batches(X, Y, 10):
        loss = ((x @ W - y) ** 2).mean()
        loss.backward()
        with torch.no_grad():
            W -= 0.1 * W.grad
            W.grad.zero_()
