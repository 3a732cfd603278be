import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def batch_norm(X, gamma, beta, moving_mean, moving_var, eps, momentum):
    if not torch.is_grad_enabled():
        X_hat = (X - moving_mean) / torch.sqrt(moving_var + eps)
    else:
        mean = X.mean(dim=0)
        var = ((X - mean) ** 2).mean(dim=0)
        X_hat = (X - mean) / torch.sqrt(var + eps)
        moving_mean = (1.0 - momentum) * moving_mean + momentum * mean
        moving_var = (1.0 - momentum) * moving_var + momentum * var
    Y = gamma * X_hat + beta
    return Y, moving_mean.data, moving_var.data


class BatchNorm(nn.Module):
    def __init__(self, num_features):
        super().__init__()
        self.gamma = nn.Parameter(torch.ones(num_features))
        self.beta = nn.Parameter(torch.zeros(num_features))
        self.moving_mean = torch.zeros(num_features)
        self.moving_var = torch.ones(num_features)

    def forward(self, X):
        Y, self.moving_mean, self.moving_var = batch_norm(X, self.gamma, self.beta, self.moving_mean, self.moving_var,
                                                          eps=1e-5, momentum=0.1)
        return Y


net = nn.Sequential(nn.Linear(5, 8), BatchNorm(8), nn.Sigmoid(), nn.Linear(8, 2))
opt = torch.optim.SGD(net.parameters(), lr=0.5)
for _ in range(3):
    loss = F.cross_entropy(net(torch.randn(6, 5)), torch.randint(0, 2, (6,)))
    opt.zero_grad()
    loss.backward()
    opt.step()
