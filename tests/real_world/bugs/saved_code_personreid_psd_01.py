import torch

torch.manual_seed(0)


def projectPSD(M):
    d, V = torch.linalg.eigh(M)
    for idx, i in enumerate(d):
        if i <= 0:
            d[idx] = torch.finfo(torch.float64).eps
    D = torch.diag(d).type(torch.double)
    V = V.type(torch.double)
    return torch.mm(V, torch.mm(D, V.T))


def mahalanobis(M, x, y):
    diff = x - y
    return (diff @ M * diff).sum(-1)


def train(steps=3, dim=4):
    L = (torch.randn(dim, dim, dtype=torch.double) * 0.3).requires_grad_()
    opt = torch.optim.SGD([L], lr=0.05)
    anchors = torch.randn(8, dim, dtype=torch.double)
    positives = anchors + 0.1 * torch.randn(8, dim, dtype=torch.double)
    negatives = torch.randn(8, dim, dtype=torch.double)
    for _ in range(steps):
        M = projectPSD(L + L.T - 0.5 * torch.eye(dim, dtype=torch.double))
        loss = torch.relu(1.0 + mahalanobis(M, anchors, positives) - mahalanobis(M, anchors, negatives)).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()


train()
