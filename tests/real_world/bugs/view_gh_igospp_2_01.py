import torch
import torch.nn as nn

torch.manual_seed(0)


def line_search(masks, total_grads, loss_function, alpha=1.0, beta=0.2, max_alpha=1e5, num_iter=4):
    t = torch.ones(masks.shape[0])
    indices = torch.ones(masks.shape[0], dtype=torch.bool)
    alphas = torch.ones_like(t) * alpha
    with torch.no_grad():
        base_losses = loss_function(masks)
        t *= beta * (total_grads ** 2).flatten(1).sum(1)
        for i in range(num_iter):
            losses = loss_function(masks[indices] - alphas[indices, None, None, None] * total_grads[indices])
            indices[indices] = losses > base_losses[indices] + alphas[indices] * t[indices]
            alphas[indices] *= beta
            if not indices.any():
                break
    return alphas.clamp(max=max_alpha)


model = nn.Sequential(nn.Conv2d(1, 2, 3, padding=1), nn.Flatten(), nn.Linear(2 * 6 * 6, 3))
images = torch.randn(4, 1, 6, 6)


def loss_function(m):
    return model(images[: m.shape[0]] * m).softmax(-1)[:, 0]


masks = torch.rand(4, 1, 6, 6)
total_grads = torch.randn(4, 1, 6, 6) * 0.1
alphas = line_search(masks, total_grads, loss_function)
print(alphas)
