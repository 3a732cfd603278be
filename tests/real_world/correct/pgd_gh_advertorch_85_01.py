import numpy as np
import torch
import torch.nn as nn

torch.manual_seed(0)


def batch_multiply(float_or_vector, tensor):
    return float_or_vector * tensor


def batch_clamp(float_or_vector, tensor):
    return torch.clamp(tensor, -float_or_vector, float_or_vector)


def clamp(input, min=None, max=None):
    return torch.clamp(input, min=min, max=max)


def perturb_iterative(xvar, yvar, predict, nb_iter, eps, eps_iter, loss_fn, delta_init=None, minimize=False,
                      ord=np.inf, clip_min=0.0, clip_max=1.0):
    if delta_init is not None:
        delta = delta_init
    else:
        delta = torch.zeros_like(xvar)

    delta.requires_grad_()
    for ii in range(nb_iter):
        outputs = predict(xvar + delta)
        loss = loss_fn(outputs, yvar)
        if minimize:
            loss = -loss

        loss.backward()
        if ord == np.inf:
            grad_sign = delta.grad.data.sign()
            delta.data = delta.data + batch_multiply(eps_iter, grad_sign)
            delta.data = batch_clamp(eps, delta.data)
            delta.data = clamp(xvar.data + delta.data, clip_min, clip_max) - xvar.data
        delta.grad.data.zero_()

    x_adv = clamp(xvar + delta, clip_min, clip_max)
    return x_adv


predict = nn.Sequential(nn.Flatten(), nn.Linear(12, 3))
x_adv = perturb_iterative(torch.rand(2, 3, 2, 2), torch.tensor([0, 2]), predict, nb_iter=3, eps=0.3,
                          eps_iter=0.01, loss_fn=nn.CrossEntropyLoss(reduction="sum"))
print(x_adv.shape)
