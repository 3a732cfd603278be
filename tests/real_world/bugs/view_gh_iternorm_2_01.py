import torch
import torch.nn as nn

torch.manual_seed(0)


class IterNorm(nn.Module):
    def __init__(self, num_features, num_groups=2, T=3, eps=1e-5, momentum=0.1):
        super().__init__()
        self.T = T
        self.eps = eps
        self.momentum = momentum
        self.num_features = num_features
        self.num_groups = num_groups
        num_channels = num_features // num_groups
        self.register_buffer('running_mean', torch.zeros(num_groups, num_channels, 1))
        self.register_buffer('running_wm', torch.eye(num_channels).expand(num_groups, num_channels, num_channels))

    def forward(self, X):
        g = self.num_groups
        x = X.transpose(0, 1).contiguous().view(g, X.size(1) // g, -1)
        d, m = x.size(1), x.size(2)
        if self.training:
            mean = x.mean(-1, keepdim=True)
            xc = x - mean
            P = [None] * (self.T + 1)
            P[0] = torch.eye(d).expand(g, d, d)
            Sigma = torch.baddbmm(torch.eye(d).expand(g, d, d), xc, xc.transpose(1, 2), beta=self.eps, alpha=1.0 / m)
            rTr = (Sigma * P[0]).sum((1, 2), keepdim=True).reciprocal_()
            Sigma_N = Sigma * rTr
            for k in range(self.T):
                P[k + 1] = torch.baddbmm(P[k], torch.matrix_power(P[k], 3), Sigma_N, beta=1.5, alpha=-0.5)
            wm = P[self.T].mul_(rTr.sqrt())
            self.running_mean.copy_(self.momentum * mean.detach() + (1.0 - self.momentum) * self.running_mean)
            self.running_wm.copy_(self.momentum * wm.detach() + (1.0 - self.momentum) * self.running_wm)
        else:
            xc = x - self.running_mean
            wm = self.running_wm
        xn = wm.matmul(xc)
        return xn.view(X.size(1), X.size(0)).transpose(0, 1)


model = nn.Sequential(nn.Linear(5, 4), IterNorm(4), nn.Linear(4, 2))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.randn(8, 5)
for _ in range(2):
    opt.zero_grad()
    loss = model(x).pow(2).mean()
    loss.backward()
    opt.step()
