import torch

torch.manual_seed(0)


def projectPSD(M, eps=1e-6):
    d, V = torch.linalg.eigh(M)
    d = d.clamp(min=eps)
    return V @ torch.diag(d) @ V.T


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
