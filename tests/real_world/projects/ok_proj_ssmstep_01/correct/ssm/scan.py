import torch


def scan(state, x, log_a, b, c):
    decay = torch.exp(log_a)
    ys = []
    for t in range(x.shape[1]):
        state = decay * state + b * x[:, t, :, None]
        ys.append((c * state).sum(-1))
    return torch.stack(ys, dim=1), state
