import torch

torch.manual_seed(0)


def rbf_kernel(X, lengthscale):
    sq_dist = (X.unsqueeze(1) - X.unsqueeze(0)).pow(2).sum(-1)
    return torch.exp(-0.5 * sq_dist / lengthscale ** 2)


def psd_safe_cholesky(A, jitter=1e-6, max_tries=3):
    L, info = torch.linalg.cholesky_ex(A)
    if not torch.any(info):
        return L
    for i in range(max_tries):
        jitter_new = jitter * (10 ** i)
        Aprime = A.clone()
        Aprime.diagonal(dim1=-2, dim2=-1).add_(jitter)
        L, info = torch.linalg.cholesky_ex(Aprime)
        if not torch.any(info):
            return L
        jitter = jitter_new
    raise RuntimeError("not p.d. after adding jitter")


def neg_mll(X, y, log_lengthscale):
    K = rbf_kernel(X, log_lengthscale.exp())
    L = psd_safe_cholesky(K)
    alpha = torch.cholesky_solve(y.unsqueeze(-1), L)
    return 0.5 * (y.unsqueeze(-1) * alpha).sum() + L.diagonal().log().sum()


X = torch.cat([torch.linspace(0, 1, 6), torch.tensor([0.2])]).unsqueeze(-1).double()
X[-1] = X[1]
y = torch.sin(6 * X).squeeze(-1)
log_lengthscale = torch.zeros(1, dtype=torch.double, requires_grad=True)
opt = torch.optim.Adam([log_lengthscale], lr=0.05)
for _ in range(2):
    loss = neg_mll(X, y, log_lengthscale)
    opt.zero_grad()
    loss.backward()
    opt.step()
