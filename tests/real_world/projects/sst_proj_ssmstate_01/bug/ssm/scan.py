import torch


def recurrent_step(state, x_t, log_a, b, c):
    decay = torch.exp(log_a)
    state_next = decay * state + b * x_t[..., None]
    return state_next, (c * state_next).sum(-1)
