import torch

torch.manual_seed(0)


def rbf(X, Z, lengthscale):
    scaled_X = X / lengthscale
    scaled_Z = Z / lengthscale
    r2 = (scaled_X ** 2).sum(1, keepdim=True) - 2 * scaled_X @ scaled_Z.T + (scaled_Z ** 2).sum(1)
    return torch.exp(-0.5 * r2)


def add_noise_cov(K, likelihood_variance):
    k_diag = torch.diag(K)
    s_diag = torch.ones_like(k_diag) * likelihood_variance
    return K.diagonal_scatter(k_diag + s_diag)


def neg_log_marginal(X, y, log_lengthscale, log_noise, jitter=1e-6):
    Kff = add_noise_cov(rbf(X, X, log_lengthscale.exp()), log_noise.exp() + jitter)
    Lff = torch.linalg.cholesky(Kff)
    alpha = torch.cholesky_solve(y.unsqueeze(-1), Lff)
    return 0.5 * (y.unsqueeze(-1) * alpha).sum() + Lff.diagonal().log().sum()


X = torch.linspace(0, 1, 10).unsqueeze(-1)
y = torch.sin(6 * X).squeeze(-1) + 0.05 * torch.randn(10)
log_lengthscale = torch.zeros(1, requires_grad=True)
log_noise = torch.tensor(-2.0, requires_grad=True)
opt = torch.optim.Adam([log_lengthscale, log_noise], lr=0.05)
for _ in range(3):
    loss = neg_log_marginal(X, y, log_lengthscale, log_noise)
    opt.zero_grad()
    loss.backward()
    opt.step()
