import torch

from maml.functional import forward


def gradient_update_parameters(params, x, y, step_size=0.1, first_order=False):
    loss = torch.nn.functional.mse_loss(forward(params, x), y)
    grads = torch.autograd.grad(loss, list(params.values()), create_graph=not first_order)
    return {name: p - step_size * g for (name, p), g in zip(params.items(), grads)}
