import torch


def gradient_penalty(critic, real, fake, lambda_gp=10.0):
    alpha = torch.rand(real.shape[0], 1)
    interp = (alpha * real + (1 - alpha) * fake).requires_grad_(True)
    scores = critic(interp)
    grads = torch.autograd.grad(scores.sum(), interp, create_graph=True)[0]
    return lambda_gp * ((grads.norm(2, dim=1) - 1) ** 2).mean()
