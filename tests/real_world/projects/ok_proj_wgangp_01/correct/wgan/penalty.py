import torch


def calc_gradient_penalty(netD, real, fake, lam=10.0):
    alpha = torch.rand(real.shape[0], 1)
    interp = (alpha * real + (1 - alpha) * fake).requires_grad_(True)
    out = netD(interp)
    grads = torch.autograd.grad(out, interp, torch.ones_like(out), create_graph=True, retain_graph=True)[0]
    return ((grads.norm(2, dim=1) - 1) ** 2).mean() * lam
