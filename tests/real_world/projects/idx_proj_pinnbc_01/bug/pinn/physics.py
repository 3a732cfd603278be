import torch


def burgers_residual(u, xt, nu=0.01):
    grads = torch.autograd.grad(u.sum(), xt, create_graph=True)[0]
    u_x, u_t = grads[:, :1], grads[:, 1:]
    u_xx = torch.autograd.grad(u_x.sum(), xt, create_graph=True)[0][:, :1]
    return u_t + u * u_x - nu * u_xx
